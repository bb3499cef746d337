package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.testing.Soak;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soak ({@link Soak}) over shm: eight threads of a holder manager read and write buffers of
 * mixed sizes of an owner manager (both of this JVM, with shm and tcp; every op required to go
 * over shm), releasing and registering buffers and renewing their local memory along the way.
 * Bounded: {@value #DEFAULT_SECONDS} s by default, {@code -Drdma4j.soak.seconds=600} runs it
 * longer. Nothing corrupt, nothing lost, and once both managers closed this process has the
 * threads and the descriptors (sockets, memory files, pidfds, pipes) it had before they opened.
 */
class ShmSoakTest {

    static final long DEFAULT_SECONDS = 10;
    private static final Duration SETTLE = Duration.ofSeconds(30);

    @Test
    void eightThreadsOfMixedOpsWithReleasesAndReRegistrations_noCorruption_noLostOp_resourcesBackToStart() throws Exception {
        Duration run = Duration.ofSeconds(Long.getLong("rdma4j.soak.seconds", DEFAULT_SECONDS));
        long seed = Long.getLong("rdma4j.soak.seed", 20261206L);
        try (RdmaManager owner = RdmaManager.newBuilder().isolated().build();
             RdmaManager holder = RdmaManager.newBuilder().isolated().build()) {
            Soak.warmUp(owner, holder, "shm");
        }
        Soak.awaitNoManagerThreads(SETTLE);
        Map<String, Long> before = Soak.processResources();
        Map<String, Long> threadsBefore = Soak.threadNames();
        Soak.Result result;
        try (RdmaManager owner = RdmaManager.newBuilder().isolated().build();
             RdmaManager holder = RdmaManager.newBuilder().isolated().build()) {
            result = new Soak(owner, holder, "shm", 8, seed).run(run, Soak::processResources);
        }
        Map<String, Long> after = settled(before);
        System.out.println("shm soak " + run.toSeconds() + " s: " + result.line() + " before=" + before + " after=" + after);

        assertAll(
                () -> assertEquals(0, result.corruptions(), result.problems().toString()),
                () -> assertEquals(0, result.lost(), result.problems().toString()),
                () -> assertTrue(result.ops() > 0, result.line()),
                () -> assertTrue(result.reRegistrations() > 0 && result.localRenewals() > 0, result.line()),
                () -> assertEquals(result.start().get("threads"), result.end().get("threads"), "threads while running"),
                () -> assertEquals(before, after, "threads and descriptors once the managers closed; threads before "
                        + threadsBefore + ", after " + Soak.threadNames()));
    }

    /** Polls until the process's resources are {@code expected} again (threads end on their own time), at most {@link #SETTLE}. */
    static Map<String, Long> settled(Map<String, Long> expected) throws Exception {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        Map<String, Long> now = Soak.processResources();
        while (!now.equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            now = Soak.processResources();
        }
        return now;
    }
}
