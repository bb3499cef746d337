package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.PortAttributes;

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
 *   <li>{@code gpu:<ordinal>} (not resolvable to a NIC here) and no target: every active device.</li>
 * </ul>
 *
 * @param devices the chosen devices, best ranked first; never empty
 * @param why     the reason, for the INFO line
 */
record DeviceChoice(List<Candidate> devices, String why) {

    /** A device with its port, for ranking. */
    record Candidate(String name, PortAttributes port, Optional<Integer> numaNode) {
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
        } else {
            choice = new DeviceChoice(active, target.isPresent() ? "every active device: device target " + target.get()
                    + " cannot be resolved to a NIC here" : "every active device (no device target)");
        }
        if (choice.devices().isEmpty()) {
            throw new IllegalStateException("no RDMA device with an active port " + VerbsDevice.PORT + " (have " + ranked + ")"
                    + (target.isPresent() ? " for device target " + target.get() : ""));
        }
        return choice;
    }
}
