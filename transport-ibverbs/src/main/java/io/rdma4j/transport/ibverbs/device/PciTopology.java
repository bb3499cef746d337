package io.rdma4j.transport.ibverbs.device;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The host's PCI tree as sysfs shows it, for placing RDMA devices near a GPU ({@code gpu:<n>}
 * device targets). Read from a sysfs root ({@code /sys} on a real host; tests give a tree of their
 * own, with the same directories and symbolic links).
 *
 * <ul>
 *   <li>GPUs are the PCI functions of class display/VGA ({@code 0x0300}) or display/3D
 *       ({@code 0x0302}) from NVIDIA ({@code 0x10de}) or AMD ({@code 0x1002}), numbered in PCI
 *       address order, as CUDA numbers them with {@code CUDA_DEVICE_ORDER=PCI_BUS_ID} and ROCm by
 *       default.</li>
 *   <li>A device's place in the tree is the real path of its sysfs directory
 *       ({@code /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0}): each component one bridge or
 *       switch port. An RDMA device's is that of {@code class/infiniband/<name>/device}; a soft
 *       device (soft-RoCE) has none.</li>
 *   <li>Two devices are as far apart as the components of their paths below the deepest one they
 *       share: under one PCIe switch they are a few apart, under different root complexes the
 *       whole length of both paths.</li>
 * </ul>
 */
final class PciTopology {

    /** The real host's. */
    static final PciTopology HOST = new PciTopology(Path.of("/sys"));

    private static final List<String> GPU_VENDORS = List.of("0x10de", "0x1002");

    private final Path sys;

    PciTopology(Path sys) {
        this.sys = sys;
    }

    /** The GPUs' PCI addresses, in address order; empty when there is none (or no sysfs). */
    List<String> gpus() {
        List<String> found = new ArrayList<>();
        Path devices = sys.resolve("bus/pci/devices");
        if (!Files.isDirectory(devices)) {
            return found;
        }
        try (DirectoryStream<Path> all = Files.newDirectoryStream(devices)) {
            for (Path d : all) {
                String cls = read(d.resolve("class")).orElse("");
                String vendor = read(d.resolve("vendor")).orElse("");
                if ((cls.startsWith("0x0300") || cls.startsWith("0x0302")) && GPU_VENDORS.contains(vendor)) {
                    found.add(d.getFileName().toString());
                }
            }
        } catch (IOException e) {
            return List.of();
        }
        found.sort(null); // domain:bus:device.function, fixed-width hex: text order is address order
        return found;
    }

    /** Where the PCI function at {@code address} sits in the tree, when sysfs shows it. */
    Optional<Path> pciPath(String address) {
        return realPath(sys.resolve("bus/pci/devices").resolve(address));
    }

    /** Where the RDMA device {@code name} sits in the PCI tree; empty for a device with no PCI function (soft-RoCE). */
    Optional<Path> rdmaDevicePath(String name) {
        return realPath(sys.resolve("class/infiniband").resolve(name).resolve("device"));
    }

    /** The NUMA node sysfs gives the PCI function at {@code address}; empty when unknown ({@code -1}). */
    Optional<Integer> numaNode(String address) {
        return read(sys.resolve("bus/pci/devices").resolve(address).resolve("numa_node")).flatMap(PciTopology::node);
    }

    /** The NUMA node sysfs gives the RDMA device {@code name}; empty when unknown. */
    Optional<Integer> rdmaDeviceNumaNode(String name) {
        return read(sys.resolve("class/infiniband").resolve(name).resolve("device/numa_node")).flatMap(PciTopology::node);
    }

    /** Components of {@code a} and {@code b} below the deepest directory they share: 0 for one device. */
    static int distance(Path a, Path b) {
        int common = 0;
        int n = Math.min(a.getNameCount(), b.getNameCount());
        while (common < n && a.getName(common).equals(b.getName(common))) {
            common++;
        }
        return (a.getNameCount() - common) + (b.getNameCount() - common);
    }

    private static Optional<Integer> node(String text) {
        try {
            int n = Integer.parseInt(text);
            return n < 0 ? Optional.empty() : Optional.of(n);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static Optional<String> read(Path file) {
        try {
            return Optional.of(Files.readString(file).trim());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static Optional<Path> realPath(Path p) {
        try {
            return Optional.of(p.toRealPath());
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public String toString() {
        return "PciTopology[" + sys + "]";
    }
}
