package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.DeviceTarget;
import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.PortAttributes;
import io.rdma4j.transport.ibverbs.ffi.VerbsContext;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Which RDMA devices a transport opens ({@link DeviceChoice} over every device's port, NUMA node
 * and PCI path), and which GID of a port it addresses: what happens once, before any
 * {@link VerbsDevice} polls.
 */
public final class DeviceOpening {

    private static final System.Logger LOG = System.getLogger(DeviceOpening.class.getName());

    private DeviceOpening() {
    }

    /**
     * Opens every device the target allows ({@link DeviceChoice}), best ranked first, and logs at
     * INFO which and why. On failure closes what it opened.
     *
     * @throws IllegalStateException when no device with an active port fits
     */
    public static List<VerbsDevice> openChosen(Optional<DeviceTarget> target, int cqEntries, long busyPollNanos) {
        List<DeviceChoice.Candidate> candidates = new ArrayList<>();
        for (String n : VerbsContext.deviceNames()) {
            try (VerbsContext c = VerbsContext.open(n)) {
                candidates.add(new DeviceChoice.Candidate(n, c.queryPort(VerbsDevice.PORT), PciTopology.HOST.rdmaDeviceNumaNode(n),
                        PciTopology.HOST.rdmaDevicePath(n)));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "RDMA device {0} skipped: {1}", n, e.getMessage());
            }
        }
        DeviceChoice choice = DeviceChoice.of(candidates, target);
        List<VerbsDevice> opened = new ArrayList<>();
        try {
            for (DeviceChoice.Candidate c : choice.devices()) {
                opened.add(VerbsDevice.open(c, cqEntries, busyPollNanos));
            }
        } catch (RuntimeException e) {
            opened.forEach(VerbsDevice::close);
            throw e;
        }
        LOG.log(System.Logger.Level.INFO, "ibverbs uses {0} on port {1}: {2}; candidates {3}",
                opened.stream().map(d -> d.name + " (GID " + d.gid + " index " + d.gidIndex + ", LID " + d.port.lid() + ")").toList(),
                VerbsDevice.PORT, choice.why(), candidates.stream().map(DeviceChoice.Candidate::toString).toList());
        return opened;
    }

    /** On Ethernet (RoCE) the first IPv4-mapped GID (RoCE v2 over IPv4), else the first non-zero one; index 0 on InfiniBand. */
    static int gidIndex(VerbsContext context, PortAttributes port) {
        if (port.linkLayer() != Ibv.IBV_LINK_LAYER_ETHERNET) {
            return 0;
        }
        int firstNonZero = -1;
        for (int i = 0; i < port.gidTableLength(); i++) {
            Gid g = context.queryGid(VerbsDevice.PORT, i);
            if (g.isIpv4Mapped()) {
                return i;
            }
            if (firstNonZero < 0 && !g.isZero()) {
                firstNonZero = i;
            }
        }
        if (firstNonZero < 0) {
            throw new IllegalStateException(context.deviceName() + " has no GID on port " + VerbsDevice.PORT);
        }
        return firstNonZero;
    }
}
