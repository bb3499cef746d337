package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.PortAttributes;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which devices a transport uses under each device target, and the reason it gives. */
class DeviceChoiceTest {

    private static DeviceChoice.Candidate device(String name, boolean active, int speed, int numa) {
        PortAttributes port = new PortAttributes(active ? Ibv.IBV_PORT_ACTIVE : 1, 5, 5, 16, 1L << 31, 0, 1, speed, 5,
                Ibv.IBV_LINK_LAYER_ETHERNET);
        return new DeviceChoice.Candidate(name, port, Optional.of(numa));
    }

    private static final List<DeviceChoice.Candidate> HOST = List.of(
            device("slow0", true, 1, 0), device("fast1", true, 8, 1), device("down0", false, 16, 0), device("fast0", true, 8, 0));

    private static List<String> names(DeviceChoice c) {
        return c.devices().stream().map(DeviceChoice.Candidate::name).toList();
    }

    @Test
    void noTarget_everyActiveDevice_bestRankedFirst() {
        DeviceChoice c = DeviceChoice.of(HOST, Optional.empty());

        assertAll(
                () -> assertEquals(List.of("fast0", "fast1", "slow0"), names(c)),
                () -> assertEquals("every active device (no device target)", c.why()));
    }

    @Test
    void nicTarget_thatDeviceAlone() {
        DeviceChoice c = DeviceChoice.of(HOST, Optional.of(DeviceTarget.nic("slow0")));

        assertAll(
                () -> assertEquals(List.of("slow0"), names(c)),
                () -> assertEquals("named by device target nic:slow0", c.why()));
    }

    @Test
    void nicTarget_portDown_refusedNamingTheCandidates() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(HOST, Optional.of(DeviceTarget.nic("down0"))));

        assertTrue(e.getMessage().contains("down0 (port down)") && e.getMessage().contains("nic:down0"), e.getMessage());
    }

    @Test
    void nicTarget_unknown_refusedNamingTheCandidates() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(HOST, Optional.of(DeviceTarget.nic("mlx5_9"))));

        assertTrue(e.getMessage().contains("no such RDMA device") && e.getMessage().contains("fast0"), e.getMessage());
    }

    @Test
    void cpuTarget_theActiveDevicesOnThatNode() {
        DeviceChoice c = DeviceChoice.of(HOST, Optional.of(DeviceTarget.cpu(0)));

        assertAll(
                () -> assertEquals(List.of("fast0", "slow0"), names(c)),
                () -> assertTrue(c.why().contains("NUMA node 0"), c.why()));
    }

    @Test
    void cpuTarget_nodeWithoutDevices_everyActiveDevice_andSaysSo() {
        DeviceChoice c = DeviceChoice.of(HOST, Optional.of(DeviceTarget.cpu(3)));

        assertAll(
                () -> assertEquals(List.of("fast0", "fast1", "slow0"), names(c)),
                () -> assertTrue(c.why().contains("none is on NUMA node 3"), c.why()));
    }

    @Test
    void gpuTarget_everyActiveDevice_andSaysWhy() {
        DeviceChoice c = DeviceChoice.of(HOST, Optional.of(DeviceTarget.gpu(0)));

        assertTrue(c.why().contains("cannot be resolved to a NIC here"), c.why());
    }

    @Test
    void noActiveDevice_refused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(List.of(device("down0", false, 1, 0)), Optional.empty()));

        assertTrue(e.getMessage().startsWith("no RDMA device with an active port 1"), e.getMessage());
    }
}
