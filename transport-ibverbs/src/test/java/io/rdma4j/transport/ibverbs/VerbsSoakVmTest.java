package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaManager;
import io.rdma4j.testing.Soak;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soak ({@link Soak}) over ibverbs in the soft-RoCE VM: eight threads of a holder manager on
 * rxe0 read and write buffers of mixed sizes of an owner manager on rxe1 (both of this JVM, every
 * op required to go over ibverbs), releasing and registering buffers and renewing their local
 * memory along the way. Bounded: the run and its warm-up take about {@value #SECONDS} s. Nothing
 * corrupt, nothing lost, and once both managers closed, the kernel's counts of verbs objects on
 * both devices ({@code rdma resource show}: contexts, protection domains, completion queues, queue
 * pairs, memory regions) and this process's threads and descriptors are what they were before
 * the managers opened.
 */
@Tag("softroce")
class VerbsSoakVmTest {

    private static final long SECONDS = 30;
    private static final Duration SETTLE = Duration.ofSeconds(30);

    private static RdmaManager manager(String device) {
        return RdmaManager.newBuilder().isolated().providers(java.util.List.of(new VerbsTransportProvider()))
                .set(VerbsSettings.TARGET.key(), "nic:" + device).build();
    }

    private static Map<String, Long> resources() throws Exception {
        Map<String, Long> r = new TreeMap<>(Soak.processResources());
        for (String device : new String[] {"rxe0", "rxe1"}) {
            RdmaResources.counts(device).forEach((kind, n) -> r.put(device + "." + kind, (long) n));
        }
        return r;
    }

    @Test
    void eightThreadsOfMixedOpsWithReleasesAndReRegistrations_noCorruption_noLostOp_resourcesBackToStart() throws Exception {
        Duration run = Duration.ofSeconds(SECONDS).multipliedBy(10).dividedBy(11);   // plus its warm-up, a tenth of it
        try (RdmaManager owner = manager("rxe1"); RdmaManager holder = manager("rxe0")) {
            Soak.warmUp(owner, holder, VerbsTransportProvider.NAME);
        }
        Soak.awaitNoManagerThreads(SETTLE);
        Map<String, Long> before = resources();
        Map<String, Long> threadsBefore = Soak.threadNames();
        Soak.Result result;
        try (RdmaManager owner = manager("rxe1"); RdmaManager holder = manager("rxe0")) {
            result = new Soak(owner, holder, VerbsTransportProvider.NAME, 8, 20261206L).run(run, VerbsSoakVmTest::resources);
        }
        Map<String, Long> after = settled(before);
        System.out.println("verbs soak " + run.toSeconds() + " s: " + result.line() + " before=" + before + " after=" + after);

        assertAll(
                () -> assertEquals(0, result.corruptions(), result.problems().toString()),
                () -> assertEquals(0, result.lost(), result.problems().toString()),
                () -> assertTrue(result.ops() > 0, result.line()),
                () -> assertTrue(result.reRegistrations() > 0 && result.localRenewals() > 0, result.line()),
                () -> assertEquals(result.start().get("threads"), result.end().get("threads"), "threads while running"),
                () -> assertEquals(before, after, "verbs objects, threads and descriptors once the managers closed; threads before "
                        + threadsBefore + ", after " + Soak.threadNames()));
    }

    /** Polls until the resources are {@code expected} again (threads end on their own time), at most {@link #SETTLE}. */
    private static Map<String, Long> settled(Map<String, Long> expected) throws Exception {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        Map<String, Long> now = resources();
        while (!now.equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            now = resources();
        }
        return now;
    }
}
