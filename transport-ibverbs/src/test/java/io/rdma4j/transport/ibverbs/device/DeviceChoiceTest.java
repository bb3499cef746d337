package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.DeviceTarget;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.PortAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
    void gpuTarget_onAHostWithoutGpus_isRefusedSayingSo(@TempDir Path sys) {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(HOST, Optional.of(DeviceTarget.gpu(0)), new PciTopology(sys)));

        assertTrue(e.getMessage().startsWith("device target gpu:0: this host has no GPU"), e.getMessage());
    }

    // A fake sysfs: two root complexes; GPU 0 and mlx5_0 under one PCIe switch of the first, mlx5_1
    // under its other bridge; GPU 1 and mlx5_2 on the second; an Intel VGA function that is no GPU
    // here; soft-RoCE rxe0 with no PCI function.
    private static final String GPU0 = "0000:03:00.0";
    private static final String GPU1 = "0000:82:00.0";

    private static PciTopology twoSocketHost(Path sys) throws IOException {
        pci(sys, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/" + GPU0, "0x030200", "0x10de", 0);
        pci(sys, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", "0x020700", "0x15b3", 0);
        pci(sys, "pci0000:00/0000:00:02.0/0000:05:00.0", "0x020700", "0x15b3", 0);
        pci(sys, "pci0000:00/0000:00:03.0", "0x030000", "0x8086", 0);
        pci(sys, "pci0000:80/0000:80:01.0/" + GPU1, "0x030200", "0x10de", 1);
        pci(sys, "pci0000:80/0000:80:02.0/0000:83:00.0", "0x020700", "0x15b3", 1);
        rdma(sys, "mlx5_0", "0000:04:00.0");
        rdma(sys, "mlx5_1", "0000:05:00.0");
        rdma(sys, "mlx5_2", "0000:83:00.0");
        return new PciTopology(sys);
    }

    private static void pci(Path sys, String path, String cls, String vendor, int numa) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("devices").resolve(path));
        Files.writeString(dir.resolve("class"), cls + "\n");
        Files.writeString(dir.resolve("vendor"), vendor + "\n");
        Files.writeString(dir.resolve("numa_node"), numa + "\n");
        Path link = Files.createDirectories(sys.resolve("bus/pci/devices")).resolve(dir.getFileName());
        Files.createSymbolicLink(link, link.getParent().relativize(dir));
    }

    private static void rdma(Path sys, String name, String address) throws IOException {
        Path dir = Files.createDirectories(sys.resolve("class/infiniband").resolve(name));
        Path function = sys.resolve("bus/pci/devices").resolve(address).toRealPath();
        Files.createSymbolicLink(dir.resolve("device"), dir.relativize(function));
    }

    private static final List<DeviceChoice.Candidate> GPU_HOST_DEVICES = List.of(
            device("mlx5_0", true, 8, 0), device("mlx5_1", true, 8, 0), device("mlx5_2", true, 8, 1), device("rxe0", true, 1, 0));

    /** The candidates as VerbsDevice makes them: each with its place in the (fake) PCI tree. */
    private static List<DeviceChoice.Candidate> placed(PciTopology topology) {
        return GPU_HOST_DEVICES.stream().map(c -> new DeviceChoice.Candidate(c.name(), c.port(),
                topology.rdmaDeviceNumaNode(c.name()).or(c::numaNode), topology.rdmaDevicePath(c.name()))).toList();
    }

    @Test
    void gpuTarget_choosesTheDeviceUnderTheGpusPcieSwitch(@TempDir Path sys) throws IOException {
        PciTopology topology = twoSocketHost(sys);

        DeviceChoice c = DeviceChoice.of(placed(topology), Optional.of(DeviceTarget.gpu(0)), topology);

        assertAll(
                () -> assertEquals(List.of("mlx5_0"), names(c)),
                () -> assertTrue(c.why().startsWith("the active devices closest to GPU 0 (" + GPU0 + ") in the PCI tree"), c.why()));
    }

    @Test
    void gpuTarget_secondGpu_choosesTheDeviceOnItsRootComplex(@TempDir Path sys) throws IOException {
        PciTopology topology = twoSocketHost(sys);

        DeviceChoice c = DeviceChoice.of(placed(topology), Optional.of(DeviceTarget.gpu(1)), topology);

        assertEquals(List.of("mlx5_2"), names(c));
    }

    @Test
    void gpuTarget_ordinalBeyondTheGpus_isRefusedNamingThem(@TempDir Path sys) throws IOException {
        PciTopology topology = twoSocketHost(sys);

        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(placed(topology), Optional.of(DeviceTarget.gpu(2)), topology));

        assertTrue(e.getMessage().contains("this host has 2 GPU(s), [" + GPU0 + ", " + GPU1 + "]"), e.getMessage());
    }

    @Test
    void gpuTarget_devicesWithoutAPlaceInThePciTree_fallBackToTheGpusNumaNode(@TempDir Path sys) throws IOException {
        PciTopology topology = twoSocketHost(sys);

        DeviceChoice c = DeviceChoice.of(GPU_HOST_DEVICES, Optional.of(DeviceTarget.gpu(1)), topology);

        assertAll(
                () -> assertEquals(List.of("mlx5_2"), names(c)),
                () -> assertTrue(c.why().contains("GPU 1's NUMA node 1"), c.why()));
    }

    @Test
    void noActiveDevice_refused() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> DeviceChoice.of(List.of(device("down0", false, 1, 0)), Optional.empty()));

        assertTrue(e.getMessage().startsWith("no RDMA device with an active port 1"), e.getMessage());
    }
}
