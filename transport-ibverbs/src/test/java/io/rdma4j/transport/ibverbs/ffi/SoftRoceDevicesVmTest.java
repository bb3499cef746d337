package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Device listing, attribute, port and GID queries, and parking on a completion channel, on real devices. */
@Tag("softroce")
class SoftRoceDevicesVmTest {

    @Test
    void deviceNames_listBothSoftRoceDevices() {
        assertTrue(VerbsContext.deviceNames().containsAll(java.util.List.of("rxe0", "rxe1")), VerbsContext.deviceNames().toString());
        assertTrue(LibIbverbs.probe().isAvailable());
    }

    @Test
    void queries_describeAnActiveRoceV2PortAddressedByItsIpv4Gid() {
        try (VerbsContext context = VerbsContext.open("rxe0")) {
            DeviceAttributes device = context.queryDevice();
            PortAttributes port = context.queryPort(1);
            int index = RcPair.ipv4MappedGidIndex(context, port);

            assertEquals(1, device.physicalPortCount());
            assertTrue(device.maxQpWr() >= 512 && device.maxCqe() >= 512 && device.maxSge() >= 1, device.toString());
            assertTrue(port.isActive(), port.toString());
            assertEquals(Ibv.IBV_LINK_LAYER_ETHERNET, port.linkLayer());
            assertEquals(Ibv.IBV_MTU_4096, port.activeMtu(), "rxe follows the veth's 9000-byte MTU");
            assertEquals("0000:0000:0000:0000:0000:ffff:c000:0201", context.queryGid(1, index).toString());
            assertEquals(Optional.of("RoCE v2"), context.gidType(1, index));
        }
    }

    @Test
    void queryPort_portThatDoesNotExist_failsNamingTheFunction() {
        try (VerbsContext context = VerbsContext.open("rxe0")) {
            IbverbsException e = org.junit.jupiter.api.Assertions.assertThrows(IbverbsException.class, () -> context.queryPort(9));

            assertTrue(e.getMessage().startsWith("ibv_query_port failed: errno "), e.getMessage());
        }
    }

    @Test
    void awaitEvent_armedQueue_wakesWithThatQueueOnCompletion() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4, true); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(1, 1); WorkCompletions wcs = WorkCompletions.allocate(1)) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(64), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(64), RcPair.ACCESS);
            pair.a.cq.requestNotification(false);
            assertEquals(Optional.empty(), pair.a.channel.awaitEvent(0));
            wrs.setRdma(0, 1, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED, local, 0, 64, remote.address(), remote.rkey());

            pair.a.qp.postSend(wrs, 1);
            Optional<CompletionQueue> woken = pair.a.channel.awaitEvent((int) RcPair.DEADLINE.toMillis());

            assertEquals(Optional.of(pair.a.cq), woken);
            assertEquals(1, pair.a.cq.poll(wcs));
            assertEquals(Ibv.IBV_WC_SUCCESS, wcs.status(0));
        }
    }
}
