package io.rdma4j.transport.shm;

import io.rdma4j.unix.Errno;
import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;

import java.io.IOException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;

/**
 * The holder's owners: decides once per owner (by incarnation) whether this process can attach to
 * it and which path each kind of the owner's memory takes, logs that once at INFO, and keeps the
 * {@link ShmPeer} of each owner it can reach (or the reason why not). Part of {@link ShmHolder},
 * which closes it.
 *
 * <p>Thread-safe.
 */
final class ShmPeers implements AutoCloseable {

    /** Logged under {@link ShmHolder}'s name, as the holder's other lines. */
    private static final System.Logger LOG = System.getLogger(ShmHolder.class.getName());

    private final HostIdentity self;
    private final String ownIncarnation;
    private final boolean forceStaging;
    /** Reads the first 8 bytes of the owner's table with process_vm_readv: 0, or the errno. */
    private final ToIntFunction<ShmContext> probe;
    private final Map<String, Object> peers = new ConcurrentHashMap<>();   // incarnation -> ShmPeer or String (refusal)

    /**
     * @param ownIncarnation this manager's incarnation, in hex: its tokens are its own buffers
     * @param forceStaging   reach every buffer of another process through its owner's staging copy
     * @param probe          the probe copy from the owner's table ({@link ShmContext#tableAddress()})
     */
    ShmPeers(HostIdentity self, String ownIncarnation, boolean forceStaging, ToIntFunction<ShmContext> probe) {
        this.self = self;
        this.ownIncarnation = ownIncarnation;
        this.forceStaging = forceStaging;
        this.probe = probe;
    }

    /** See {@link ShmHolder#decode}. */
    ShmRemote decode(RemoteBufferRef ref) {
        if (ref.incarnation().equalsIgnoreCase(ownIncarnation)) {
            return new ShmRemote.Local(ref);
        }
        ShmContext context;
        try {
            context = ShmContext.fromBytes(ref.context());
        } catch (IllegalArgumentException e) {
            throw new TransportException(Kind.PROTOCOL, "malformed shm context: " + e.getMessage(), e);
        }
        Object peer = peers.computeIfAbsent(ref.incarnation(), inc -> attach(inc, ref, context));
        if (peer instanceof ShmPeer p) {
            if (forceStaging || !context.memoryFile() && !p.crossMemory()) {
                return new ShmRemote.Staged(ref, p);
            }
            return new ShmRemote.Attached(ref, p);
        }
        throw new TransportException(Kind.PEER_UNREACHABLE, "shm cannot reach " + ref.owner() + ": " + peer);
    }

    /** An attached peer, or the reason (a String) why not; logs a refusal once, at INFO. */
    private Object attach(String incarnation, RemoteBufferRef ref, ShmContext context) {
        String socket = Handover.name(HexFormat.of().formatHex(context.socket()));
        String reason = self.whyNotReachable(context.host()).orElse(null);
        if (reason == null) {
            try {
                Libc.close(Handover.connect(socket, context.pid(), Handover.SERVE_TIMEOUT.toNanos()));
            } catch (IOException | RuntimeException e) {
                reason = "cannot reach the owner's hand-over socket: " + e.getMessage();
            }
        }
        String refusal = context.refusal();
        if (reason == null && refusal.isEmpty() && !forceStaging) {
            try {
                int errno = probe.applyAsInt(context);         // else: no attach is tried at all
                if (errno != 0) {
                    refusal = "the kernel refused process_vm_readv on owner pid " + context.pid() + ": "
                            + Errno.describe(errno);
                }
            } catch (RuntimeException e) {
                refusal = "the probe copy from owner pid " + context.pid() + " failed: " + e.getMessage();
            }
        }
        if (reason != null) {
            LOG.log(System.Logger.Level.INFO, "shm: falling back to the next transport for owner {0} (pid {1}): {2}",
                    ref.owner(), String.valueOf(context.pid()), reason);
            return reason;
        }
        int pidfd = Libc.pidfdOpen(context.pid());
        if (pidfd < 0) {
            reason = "pidfd_open(" + context.pid() + ") failed (" + Errno.describe(-pidfd) + "): without a process "
                    + "descriptor a copy cannot be sure to reach the owner rather than a process that took its pid";
            LOG.log(System.Logger.Level.INFO, "shm: falling back to the next transport for owner {0} (pid {1}): {2}",
                    ref.owner(), String.valueOf(context.pid()), reason);
            return reason;
        }
        LOG.log(System.Logger.Level.DEBUG, "shm: attached to owner {0} (pid {1}, pidfd {2})", ref.owner(),
                String.valueOf(context.pid()), pidfd);
        LOG.log(System.Logger.Level.INFO, "shm: owner {0} (pid {1}): {2}", ref.owner(), String.valueOf(context.pid()),
                routes(refusal));
        return new ShmPeer(incarnation, context.pid(), pidfd, forceStaging && refusal.isEmpty()
                ? "rdma.shm.forceStaging=true" : refusal, socket);
    }

    /** Which path each kind of the owner's memory takes, and why: the INFO line logged once per owner. */
    private String routes(String refusal) {
        if (forceStaging) {
            return "every buffer by the owner's staging copy (rdma.shm.forceStaging=true)";
        }
        if (refusal.isEmpty()) {
            return "allocate()d buffers by mapping their memory files, other registered memory by cross-memory attach";
        }
        return "allocate()d buffers by mapping their memory files, other registered memory by the owner's staging copy "
                + "(two copies; cross-memory attach not permitted: " + refusal + ")";
    }

    /** Unmaps every owner's table (closes the peers). */
    @Override
    public void close() {
        for (Object p : peers.values()) {
            if (p instanceof ShmPeer peer) {
                peer.close();
            }
        }
        peers.clear();
    }
}
