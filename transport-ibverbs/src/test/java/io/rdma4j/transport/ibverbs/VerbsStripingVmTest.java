package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Large ops striped across the queue pairs to one peer ({@code rdma.ibverbs.qpsPerPeer} = 4, the
 * default 512 KiB minimum stripe), on the first soft-RoCE device of the VM (one device pair, so
 * that the lanes are the four queue pairs): both managers in this JVM.
 */
@Tag("softroce")
class VerbsStripingVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long MIB = 1L << 20;

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(java.util.List.of(verbs))
                .set(VerbsSettings.QPS_PER_PEER.key(), "4")
                .set(VerbsSettings.TARGET.key(), "nic:" + System.getenv("SOFTROCE_DEVICES").trim().split("\\s+")[0]);
        return managers.track(b.build());
    }

    private MemorySegment pattern(long size, int seed) {
        return DataPattern.fill(managers.arena().allocate(size, 64), seed);
    }

    @Test
    void write64MiB_thenRead_overFourQueuePairs_movesExactlyTheBytes() {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager owner = manager(new OpenedVerbs());
        RdmaManager holder = manager(holderVerbs);
        RdmaBuffer buffer = owner.allocate(64 * MIB).join();
        MemorySegment source = pattern(64 * MIB, 11);
        MemorySegment back = managers.arena().allocate(64 * MIB, 64);

        holder.write(buffer.remote(), source, TIMEOUT).join();
        holder.read(buffer.remote(), back, TIMEOUT).join();

        assertAll(
                () -> assertEquals(-1, source.mismatch(buffer.segment()), "the owner's memory holds what was written"),
                () -> assertEquals(-1, source.mismatch(back), "the read brought back what was written"),
                () -> assertEquals(4, holderVerbs.transport().liveQueuePairs(), "one queue pair per stripe"));
    }

    @Test
    void smallOps_takeTurnsOnTheQueuePairs() {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager owner = manager(new OpenedVerbs());
        RdmaManager holder = manager(holderVerbs);
        RdmaBuffer buffer = owner.allocate(4096).join();

        for (int i = 0; i < 4; i++) {
            holder.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();
        }

        assertEquals(4, holderVerbs.transport().liveQueuePairs());
    }

    @Test
    void releasedBuffer_stripedWrite_failsWithTheDevicesStatusText_andNewQueuePairsCarryTheNextOps() {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager owner = manager(new OpenedVerbs());
        RdmaManager holder = manager(holderVerbs);
        RdmaBuffer doomed = owner.allocate(8 * MIB).join();
        holder.write(doomed.remote(), pattern(8 * MIB, 1), TIMEOUT).join();    // the owner has checked this token
        doomed.close();                                                          // its memory region is gone

        CompletionException failure = assertThrows(CompletionException.class,
                () -> holder.write(doomed.remote(), pattern(8 * MIB, 2), TIMEOUT).join());

        RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, failure.getCause());
        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, submit.failures().get("ibverbs"),
                String.valueOf(submit));
        assertTrue(e.getMessage().contains("remote access error"), e.getMessage());
        RdmaBuffer next = owner.allocate(8 * MIB).join();
        MemorySegment source = pattern(8 * MIB, 3);
        MemorySegment back = managers.arena().allocate(8 * MIB, 64);
        holder.write(next.remote(), source, TIMEOUT).join();
        holder.read(next.remote(), back, TIMEOUT).join();
        assertAll(
                () -> assertEquals(-1, source.mismatch(back), "the replacement queue pairs moved the bytes"),
                () -> assertEquals(4, holderVerbs.transport().liveQueuePairs(), "four live queue pairs again"));
    }
}
