package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.DeviceTarget;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.PortAttributes;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Which devices a transport uses, and why: every active device the device target allows, best
 * ranked first (active port, then InfiniBand before Ethernet, then speed x width, then name).
 *
 * <ul>
 *   <li>{@code nic:<name>}: that device alone (an error if it does not exist or its port is down);</li>
 *   <li>{@code cpu:<numa>}: the active devices on that NUMA node, or every active device when
 *       none is there;</li>
 *   <li>{@code gpu:<ordinal>}: the active devices closest to that GPU in the PCI tree
 *       ({@link PciTopology}); the active devices on the GPU's NUMA node when no device shows its
 *       place in the tree; every active device when neither tells; an error naming the GPUs found
 *       when the host has no GPU of that ordinal;</li>
 *   <li>no target: every active device.</li>
 * </ul>
 *
 * @param devices the chosen devices, best ranked first; never empty
 * @param why     the reason, for the INFO line
 */
public record DeviceChoice(List<Candidate> devices, String why) {

    /**
     * A device with its port, for ranking, and where it sits: its NUMA node and its place in the
     * PCI tree ({@link PciTopology#rdmaDevicePath}), each when sysfs shows it.
     */
    record Candidate(String name, PortAttributes port, Optional<Integer> numaNode, Optional<Path> pciPath) {

        Candidate(String name, PortAttributes port, Optional<Integer> numaNode) {
            this(name, port, numaNode, Optional.empty());
        }

        /** Rough link rate rank: active before inactive, then InfiniBand before Ethernet, then speed x width. */
        long rank() {
            return (port.isActive() ? 1L << 40 : 0) + (port.linkLayer() == Ibv.IBV_LINK_LAYER_INFINIBAND ? 1L << 32 : 0)
                    + (long) port.activeSpeed() * port.activeWidth();
        }

        @Override
        public String toString() {
            return name + (port.isActive() ? "" : " (port down)");
        }
    }

    /**
     * Chooses among {@code candidates} (any order).
     *
     * @throws IllegalStateException when no device with an active port fits; the message lists the candidates
     */
    static DeviceChoice of(List<Candidate> candidates, Optional<DeviceTarget> target) {
        return of(candidates, target, PciTopology.HOST);
    }

    /**
     * Chooses among {@code candidates} (any order), finding GPUs in {@code topology}.
     *
     * @throws IllegalStateException when no device with an active port fits, or a {@code gpu:<n>}
     *                               target names a GPU the host does not have; the message lists
     *                               the candidates or the GPUs found
     */
    static DeviceChoice of(List<Candidate> candidates, Optional<DeviceTarget> target, PciTopology topology) {
        List<Candidate> ranked = new ArrayList<>(candidates);
        ranked.sort(Comparator.comparingLong(Candidate::rank).reversed().thenComparing(Candidate::name));
        List<Candidate> active = ranked.stream().filter(c -> c.port().isActive()).toList();
        DeviceChoice choice;
        if (target.isPresent() && target.get() instanceof DeviceTarget.Nic(String wanted)) {
            Candidate named = ranked.stream().filter(c -> c.name().equals(wanted)).findFirst()
                    .orElseThrow(() -> new IllegalStateException("device target " + target.get() + ": no such RDMA device (have "
                            + ranked + ")"));
            choice = new DeviceChoice(named.port().isActive() ? List.of(named) : List.of(),
                    "named by device target " + target.get());
        } else if (target.isPresent() && target.get() instanceof DeviceTarget.Cpu(long numa)) {
            List<Candidate> local = active.stream().filter(c -> c.numaNode().equals(Optional.of((int) numa))).toList();
            choice = local.isEmpty()
                    ? new DeviceChoice(active, "every active device: none is on NUMA node " + numa + " (device target "
                    + target.get() + ")")
                    : new DeviceChoice(local, "the active devices on NUMA node " + numa + ", as device target " + target.get()
                    + " asks");
        } else if (target.isPresent() && target.get() instanceof DeviceTarget.Gpu(long ordinal)) {
            choice = nearGpu(active, ordinal, topology);
        } else {
            choice = new DeviceChoice(active, "every active device (no device target)");
        }
        if (choice.devices().isEmpty()) {
            throw new IllegalStateException("no RDMA device with an active port " + VerbsDevice.PORT + " (have " + ranked + ")"
                    + (target.isPresent() ? " for device target " + target.get() : ""));
        }
        return choice;
    }

    /** The active devices closest to GPU {@code ordinal}: in the PCI tree, else on its NUMA node, else all. */
    private static DeviceChoice nearGpu(List<Candidate> active, long ordinal, PciTopology topology) {
        String target = "device target " + DeviceTarget.gpu(ordinal);
        List<String> gpus = topology.gpus();
        if (ordinal >= gpus.size()) {
            throw new IllegalStateException(target + ": this host has " + (gpus.isEmpty() ? "no GPU"
                    : gpus.size() + " GPU(s), " + gpus) + " (PCI display controllers of NVIDIA or AMD, numbered in PCI "
                    + "address order, as CUDA_DEVICE_ORDER=PCI_BUS_ID numbers them); use cpu:<numa> or nic:<name> instead");
        }
        String address = gpus.get((int) ordinal);
        Optional<Path> gpu = topology.pciPath(address);
        if (gpu.isPresent()) {
            int best = Integer.MAX_VALUE;
            for (Candidate c : active) {
                if (c.pciPath().isPresent()) {
                    best = Math.min(best, PciTopology.distance(c.pciPath().get(), gpu.get()));
                }
            }
            if (best != Integer.MAX_VALUE) {
                int closest = best;
                List<Candidate> near = active.stream()
                        .filter(c -> c.pciPath().isPresent() && PciTopology.distance(c.pciPath().get(), gpu.get()) == closest)
                        .toList();
                return new DeviceChoice(near, "the active devices closest to GPU " + ordinal + " (" + address
                        + ") in the PCI tree, " + closest + " links apart, as " + target + " asks");
            }
        }
        Optional<Integer> numa = topology.numaNode(address);
        if (numa.isPresent()) {
            List<Candidate> local = active.stream().filter(c -> c.numaNode().equals(numa)).toList();
            if (!local.isEmpty()) {
                return new DeviceChoice(local, "the active devices on GPU " + ordinal + "'s NUMA node " + numa.get()
                        + " (no device shows its place in the PCI tree), as " + target + " asks");
            }
        }
        return new DeviceChoice(active, "every active device: none shows where it sits relative to GPU " + ordinal
                + " (" + address + ") (" + target + ")");
    }
}
