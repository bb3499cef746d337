package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A queue pair taken out of service is drained before it is destroyed: the work requests still in
 * flight on it complete, or are flushed by the device, and every one of them comes back through the
 * completion queue before {@code ibv_destroy_qp}; the ops' futures complete with those outcomes.
 * An owner manager on rxe1 and a holder on rxe0, one queue pair between them
 * ({@code rdma.ibverbs.qpsPerPeer=1}), both of this JVM.
 *
 * <p>Mutant killed: {@code VerbsConnection.breakDown} destroying the queue pair at once (through
 * {@code destroyNow}, which fails what was in flight as "not completed: its queue pair was
 * destroyed") instead of once drained: then the flushed reads do not come back through the
 * completion queue.
 */
@Tag("softroce")
class VerbsDrainVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long MIB = 1L << 20;
    /** Sixteen reads of 8 MiB (one work request each) queued on one queue pair: soft-RoCE takes most of a second for them. */
    private static final int READS = 16;
    private static final long READ_BYTES = 8 * MIB;

    @RegisterExtension
    final Managers managers = new Managers();

    @Test
    void queuePairTakenOutOfServiceWithReadsInFlight_isDestroyedOnlyOnceEveryReadCameBackThroughTheCompletionQueue()
            throws Exception {
        RdmaManager owner = managers.track(RdmaManager.newBuilder().isolated().providers(List.of(new VerbsTransportProvider()))
                .set(VerbsSettings.TARGET.key(), "nic:rxe1").build());
        OpenedVerbs verbs = new OpenedVerbs();
        RdmaManager holder = managers.track(verbs.builder("rxe0", VerbsSettings.QPS_PER_PEER.key() + "=1").build());
        int queuePairsBefore = RdmaResources.counts("rxe0").get("qp");
        RdmaBuffer large = owner.allocate(READS * READ_BYTES).join();
        DataPattern.fill(large.segment(), 5);
        List<RdmaRemoteBuffer> slices = new ArrayList<>();
        List<MemorySegment> locals = new ArrayList<>();
        for (int i = 0; i < READS; i++) {       // each slice's token checked, the queue pair up: the reads below are posted at once
            slices.add(large.remote().slice(i * READ_BYTES, READ_BYTES));
            locals.add(managers.arena().allocate(READ_BYTES, 4096));
            holder.read(slices.get(i), locals.get(i), TIMEOUT).join();
        }
        VerbsDevice device = verbs.transport().devices().getFirst();
        assertTrue(device.maxMessageBytes() >= READ_BYTES, "one work request per read on " + device);
        long completionsBefore = device.completions();

        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i = 0; i < READS; i++) {
            reads.add(holder.read(slices.get(i), locals.get(i), TIMEOUT));
        }
        int retired = verbs.transport().retireOwner(large.remote().owner(), large.remote().ownerIncarnation(),
                "the test takes it out of service");

        assertEquals(1, retired, "one queue pair to the owner left service");
        List<String> outcomes = new ArrayList<>();
        int flushed = 0;
        for (CompletableFuture<Void> read : reads) {
            try {
                read.join();
                outcomes.add("completed");
            } catch (CompletionException e) {
                Throwable t = e.getCause();
                outcomes.add(t.getClass().getSimpleName() + ": " + t.getMessage());
                assertTrue(t.getMessage().contains("Work Request Flushed Error") && t.getMessage().contains(
                        "the queue pair had left service: the test takes it out of service"), "flushed by the device: " + t.getMessage());
                flushed++;
            }
        }
        System.out.println("reads on a queue pair taken out of service: " + outcomes);
        assertTrue(flushed > 0, "reads were still in flight when the queue pair left service: " + outcomes);
        assertEquals(READS, device.completions() - completionsBefore,
                "every read came back through the completion queue, completed or flushed: " + outcomes);
        long end = System.nanoTime() + TIMEOUT.toNanos();
        while (verbs.transport().brokenQueuePairsNotDestroyed() > 0 && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertEquals(0, verbs.transport().brokenQueuePairsNotDestroyed(), "the drained queue pair was destroyed");
        assertEquals(queuePairsBefore, RdmaResources.counts("rxe0").get("qp"), "the kernel has destroyed it too");
    }
}
