package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Scatter/gather lists and the receive queue on real devices: a WRITE gathers two local ranges
 * into one remote range, and a SEND is scattered by a posted receive into two ranges of the peer.
 */
@Tag("softroce")
class SoftRoceScatterGatherVmTest {

    @Test
    void rdmaWrite_twoSges_gatheredBackToBackIntoTheRemoteRange() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(1, 2); WorkCompletions wcs = WorkCompletions.allocate(1)) {
            MemorySegment local = arena.allocate(8192);
            SoftRoceTransferVmTest.fill(local, 0x5EED_0003L);
            MemorySegment remote = arena.allocate(3000);
            MemoryRegion localMr = pair.a.pd.register(local, RcPair.ACCESS);
            MemoryRegion remoteMr = pair.b.pd.register(remote, RcPair.ACCESS);
            wrs.setSge(0, 0, localMr.address() + 100, 1000, localMr.lkey());
            wrs.setSge(0, 1, localMr.address() + 5000, 2000, localMr.lkey());
            wrs.setRdma(0, 1, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED, 2, remoteMr.address(), remoteMr.rkey());

            pair.a.qp.postSend(wrs, 1);
            assertEquals(0, RcPair.await(pair.a.cq, wcs, 1, null));

            SoftRoceTransferVmTest.assertSame(local.asSlice(100, 1000), remote.asSlice(0, 1000));
            SoftRoceTransferVmTest.assertSame(local.asSlice(5000, 2000), remote.asSlice(1000, 2000));
        }
    }

    @Test
    void send_postedReceiveWithTwoSges_scattersTheMessageAndReportsItsLength() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4); Arena arena = Arena.ofConfined();
             ReceiveWorkRequests recvs = ReceiveWorkRequests.allocate(1, 2); SendWorkRequests wrs = SendWorkRequests.allocate(1, 1);
             WorkCompletions wcs = WorkCompletions.allocate(1)) {
            MemorySegment message = arena.allocate(1500);
            SoftRoceTransferVmTest.fill(message, 0x5EED_0004L);
            MemorySegment inbox = arena.allocate(4096);
            MemoryRegion messageMr = pair.a.pd.register(message, RcPair.ACCESS);
            MemoryRegion inboxMr = pair.b.pd.register(inbox, RcPair.ACCESS);
            recvs.setSge(0, 0, inboxMr.address(), 1000, inboxMr.lkey());
            recvs.setSge(0, 1, inboxMr.address() + 2048, 1000, inboxMr.lkey());
            recvs.set(0, 42, 2);
            pair.b.qp.postReceive(recvs, 1);
            wrs.setSge(0, 0, messageMr.address(), 1500, messageMr.lkey());
            wrs.setRdma(0, 9, Ibv.IBV_WR_SEND, Ibv.IBV_SEND_SIGNALED, 1, 0, 0);

            pair.a.qp.postSend(wrs, 1);
            assertEquals(0, RcPair.await(pair.a.cq, wcs, 1, null));
            assertEquals(0, RcPair.await(pair.b.cq, wcs, 1, null));

            assertEquals(42, wcs.workRequestId(0));
            assertEquals(Ibv.IBV_WC_RECV, wcs.opcode(0) & Ibv.IBV_WC_RECV);
            assertEquals(1500, wcs.byteLength(0));
            assertEquals(pair.b.qp.number(), wcs.queuePairNumber(0));
            SoftRoceTransferVmTest.assertSame(message.asSlice(0, 1000), inbox.asSlice(0, 1000));
            SoftRoceTransferVmTest.assertSame(message.asSlice(1000, 500), inbox.asSlice(2048, 500));
        }
    }
}
