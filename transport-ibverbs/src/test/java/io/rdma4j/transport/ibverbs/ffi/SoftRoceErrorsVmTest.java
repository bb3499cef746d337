package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Work requests the peer must refuse: the completion carries the remote access error (status and
 * its text), the queue pair reports the error state, and a request posted afterwards is flushed
 * instead of hanging.
 */
@Tag("softroce")
class SoftRoceErrorsVmTest {

    private static final int SIZE = 4096;

    @Test
    void rdmaWrite_wrongRkey_remoteAccessErrorAndQueuePairInError() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4); Arena arena = Arena.ofConfined()) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(SIZE), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(SIZE), RcPair.ACCESS);

            int status = postOne(pair, Ibv.IBV_WR_RDMA_WRITE, local, 64, remote.address(), remote.rkey() ^ 0x00A5_A500);

            assertRemoteAccessErrorThenFlush(pair, status, local, remote);
        }
    }

    @Test
    void rdmaRead_pastTheEndOfTheRemoteRegion_remoteAccessErrorAndQueuePairInError() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4); Arena arena = Arena.ofConfined()) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(SIZE), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(SIZE), RcPair.ACCESS);

            int status = postOne(pair, Ibv.IBV_WR_RDMA_READ, local, 64, remote.address() + SIZE - 16, remote.rkey());

            assertRemoteAccessErrorThenFlush(pair, status, local, remote);
        }
    }

    @Test
    void rdmaWrite_sameDevice_addressBeforeTheRegion_remoteAccessError() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe0", 4); Arena arena = Arena.ofConfined()) {
            MemorySegment both = arena.allocate(2 * SIZE);
            MemoryRegion local = pair.a.pd.register(both.asSlice(0, SIZE), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(both.asSlice(SIZE, SIZE), RcPair.ACCESS);

            int status = postOne(pair, Ibv.IBV_WR_RDMA_WRITE, local, 64, remote.address() - 64, remote.rkey());

            assertRemoteAccessErrorThenFlush(pair, status, local, remote);
        }
    }

    private static void assertRemoteAccessErrorThenFlush(RcPair pair, int status, MemoryRegion local, MemoryRegion remote) {
        assertEquals("remote access error", WorkCompletions.statusText(status));
        assertEquals(Ibv.IBV_WC_REM_ACCESS_ERR, status);
        assertEquals(QueuePairState.ERROR, pair.a.qp.state());
        int next = postOne(pair, Ibv.IBV_WR_RDMA_WRITE, local, 8, remote.address(), remote.rkey());
        assertEquals("Work Request Flushed Error", WorkCompletions.statusText(next));
    }

    /** Posts one signaled request from side A and returns its completion status. */
    private static int postOne(RcPair pair, int opcode, MemoryRegion local, int length, long remoteAddress, int rkey) {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(1, 1); WorkCompletions wcs = WorkCompletions.allocate(1)) {
            wrs.setRdma(0, 7, opcode, Ibv.IBV_SEND_SIGNALED, local, 0, length, remoteAddress, rkey);
            pair.a.qp.postSend(wrs, 1);
            int[] status = new int[1];
            RcPair.await(pair.a.cq, wcs, 1, status);
            assertEquals(7, wcs.workRequestId(0));
            return status[0];
        }
    }
}
