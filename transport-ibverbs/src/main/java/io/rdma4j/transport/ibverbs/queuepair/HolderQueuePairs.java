package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.transport.ibverbs.VerbsTransport;
import io.rdma4j.transport.ibverbs.VerbsTuning;
import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;
import io.rdma4j.transport.ibverbs.liveness.HolderSweep;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The holder side of the queue pairs of one transport: up to {@code qpsPerPeer} RC queue pairs per
 * (local device, owner manager incarnation, owner device), in a {@link PeerGroup} each, created on
 * first use and connected by a handshake over the control channel (QP number, PSN, GID, LID, MTU;
 * both sides INIT, RTR, RTS) within {@code rdma.qpInitTimeout}. The owner answers it in {@link
 * OwnerQueuePairs}.
 *
 * <p>A failed handshake is remembered for its (local device, owner incarnation, owner device) and
 * reported to every later caller, on every slot, instead of being retried; an owner restarted on
 * the same endpoint has a new incarnation and gets a new handshake. A queue pair that went to ERROR is
 * replaced by a new one on its slot for later ops; the old one is destroyed once its outstanding
 * work requests have drained ({@link VerbsConnection}).
 *
 * <p>A handshake answered by an owner incarnation takes the queue pairs to any other incarnation at that
 * endpoint out of service: that manager is gone; so does {@link HolderSweep} for an owner it found gone
 * (the failed handshake goes too).
 *
 * <p>Close: see {@link QueuePairLifecycle}; this side's connections, and the queue pairs of
 * handshakes awaiting their reply, are destroyed by its close.
 *
 * <p>Thread-safe.
 */
public final class HolderQueuePairs {

    private static final System.Logger LOG = System.getLogger(HolderQueuePairs.class.getName());

    private final TransportContext context;
    private final VerbsTuning tuning;
    private final Duration qpInitTimeout;
    private final SecureRandom random = new SecureRandom();
    private final String incarnation;
    private final Map<PeerGroup.Key, PeerGroup> groups = new ConcurrentHashMap<>();
    /** Every connection made and not yet seen destroyed, replaced ones that still drain included; pruned on each handshake. */
    private final Set<VerbsConnection> created = ConcurrentHashMap.newKeySet();
    /** Queue pairs of handshakes that await their reply: close destroys them, a reply after close finds them gone. */
    private final Set<QueuePair> handshaking = ConcurrentHashMap.newKeySet();
    private final QueuePairLifecycle lifecycle;
    /** Told when a group of queue pairs to an owner is added ({@link HolderSweep#ownerAdded}). */
    private final Runnable groupAdded;

    public HolderQueuePairs(TransportContext context, VerbsTuning tuning, Duration qpInitTimeout, Runnable groupAdded,
                            QueuePairLifecycle lifecycle) {
        this.context = context;
        this.groupAdded = groupAdded;
        this.tuning = tuning;
        this.qpInitTimeout = qpInitTimeout;
        this.incarnation = HexFormat.of().formatHex(context.incarnation());
        this.lifecycle = lifecycle;
        lifecycle.onClose(this::destroyAll);
    }

    /**
     * The slots towards one owner incarnation: an owner restarted on the same endpoint is a new
     * peer, so a handshake that failed with its predecessor is not held against it.
     */
    public PeerGroup group(PeerGroup.Key key) {
        PeerGroup g = groups.get(key);
        if (g == null) {
            PeerGroup made = new PeerGroup(key, tuning.qpsPerPeer(), context.clock().nanoTime());
            if ((g = groups.putIfAbsent(key, made)) == null) {
                groupAdded.run();
                g = made;
            }
        }
        return g;
    }

    /**
     * The connection on slot {@code slot % qpsPerPeer} of {@code g} (of {@code g}'s successor when
     * {@code g} was retired): the cached one, or a new one (handshake) when there is none yet or it
     * broke. Completes exceptionally with a {@link TransportException} when the handshake failed,
     * now or earlier.
     */
    public CompletableFuture<VerbsConnection> connection(PeerGroup g, int slot) {
        if (g.retired) {
            g = group(g.key);
        }
        g.lastUse = context.clock().nanoTime();
        int i = slot % tuning.qpsPerPeer();
        CompletableFuture<VerbsConnection> f = g.slots.get(i);
        if (g.failedHandshake == null && f != null && !isBroken(f)) {
            return f;
        }
        synchronized (g) {
            if (g.failedHandshake != null) {
                return g.failedHandshake;
            }
            f = g.slots.get(i);
            if (f == null || isBroken(f)) {
                created.removeIf(VerbsConnection::isDestroyed);
                CompletableFuture<VerbsConnection> made = handshake(g.key.local(), g.key.owner(), g.key.incarnation(),
                        g.key.peerDevice(), i);
                g.slots.set(i, made);
                PeerGroup group = g;
                made.whenComplete((c, t) -> {
                    if (t != null) {
                        group.failedHandshake = made;        // a failed handshake stays: later callers get its failure
                    }
                });
                f = made;
            }
            return f;
        }
    }

    /** The owner incarnations this side keeps queue pairs (or a failed handshake) for, none asked for within {@code quietNanos}. */
    public List<HolderSweep.Owner> quietOwners(long quietNanos) {
        List<Map.Entry<HolderSweep.Owner, Long>> uses = new ArrayList<>();
        groups.forEach((k, g) -> uses.add(Map.entry(k.ownerIncarnation(), g.lastUse)));
        return HolderSweep.quiet(uses, context.clock().nanoTime(), quietNanos);
    }

    /** Owner incarnations this side keeps queue pairs (or a failed handshake) for. */
    public int owners() {
        return (int) groups.keySet().stream().map(PeerGroup.Key::ownerIncarnation).distinct().count();
    }

    /**
     * The holder side: forgets the groups of {@code gone}, an owner incarnation found gone, a failed
     * handshake included, and takes their queue pairs out of service ({@code why}, {@link #retire});
     * nothing once this side closed (close destroyed them).
     *
     * @return how many queue pairs left service, or -1 when there was no group to forget
     */
    public int retireOwner(HolderSweep.Owner gone, String why) {
        lifecycle.enterDeviceStep();
        try {
            int n = lifecycle.isClosed() ? -1 : retire(k -> k.ownerIncarnation().equals(gone), why);
            created.removeIf(VerbsConnection::isDestroyed);
            return n;
        } finally {
            lifecycle.leaveDeviceStep();
        }
    }

    /**
     * Forgets the groups {@code which} accepts; their queue pairs leave service ({@code why}), which flushes
     * what is in flight on them; each is destroyed once drained. Under the read side of the lifecycle.
     *
     * @return how many queue pairs (connected or still handshaking) left service, or -1 when no group was forgotten
     */
    private int retire(Predicate<PeerGroup.Key> which, String why) {
        int n = -1;
        for (Map.Entry<PeerGroup.Key, PeerGroup> e : groups.entrySet()) {
            if (which.test(e.getKey()) && groups.remove(e.getKey(), e.getValue())) {
                e.getValue().retired = true;
                n = Math.max(n, 0);
                for (int i = 0; i < e.getValue().slots.length(); i++) {
                    CompletableFuture<VerbsConnection> f = e.getValue().slots.get(i);
                    if (f != null && !f.isCompletedExceptionally()) {
                        n++;
                        f.thenAccept(c -> c.breakDownPeerGone(why));
                    }
                }
            }
        }
        return n;
    }

    private static boolean isBroken(CompletableFuture<VerbsConnection> f) {
        return f.isDone() && !f.isCompletedExceptionally() && f.join().isBroken();
    }

    /** Queue pairs of handshakes this side started that await their reply. */
    public int handshakingQueuePairs() {
        return handshaking.size();
    }

    /** Connections this side keeps track of: those in service and those broken but not yet seen destroyed. */
    public int trackedConnections() {
        return created.size();
    }

    /** Connections this side made whose queue pair left service and is not destroyed yet (its work requests still flushing). */
    public int brokenNotDestroyed() {
        return (int) created.stream().filter(c -> c.isBroken() && !c.isDestroyed()).count();
    }

    /** Connected queue pairs this side created and has not seen break, over all peers. */
    public int liveQueuePairs() {
        int n = 0;
        for (PeerGroup g : groups.values()) {
            for (int i = 0; i < g.slots.length(); i++) {
                CompletableFuture<VerbsConnection> f = g.slots.get(i);
                if (f != null && f.isDone() && !f.isCompletedExceptionally() && !f.join().isBroken()) {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * Creates a queue pair on {@code device} for slot {@code slot} towards {@code peerDevice} of the
     * owner incarnation {@code ownerIncarnation} at {@code owner}, and connects it with the owner's
     * reply. The queue pair belongs to {@link #handshaking} until the reply is handled: whichever of
     * the reply handler and {@link #close} takes it out destroys it (or hands it to a connection).
     */
    private CompletableFuture<VerbsConnection> handshake(VerbsDevice device, Endpoint owner, String ownerIncarnation,
                                                         String peerDevice, int slot) {
        String peer = peerDevice + " of " + owner;
        QueuePair qp = null;
        int psn = random.nextInt(1 << 24);
        lifecycle.enterDeviceStep();
        try {
            lifecycle.requireOpen();
            qp = QueuePairLifecycle.newQueuePair(device, tuning);
            qp.modifyToInit(VerbsDevice.PORT, 0, QueuePairLifecycle.QP_ACCESS);
            handshaking.add(qp);
        } catch (RuntimeException e) {
            if (qp != null) {
                QueuePairLifecycle.closeQuietly(qp);
            }
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.INTERNAL,
                    "ibverbs could not create a queue pair on " + device.name + " for " + peer + ": " + e.getMessage(), e));
        } finally {
            lifecycle.leaveDeviceStep();
        }
        QueuePair mine = qp;
        VerbsWire.Handshake request = new VerbsWire.Handshake(incarnation, ownerIncarnation, peerDevice, slot,
                new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(), device.port.activeMtu()));
        return context.control().request(owner, request.encode(), Deadline.after(qpInitTimeout, context.clock()))
                .handle((reply, t) -> {
                    lifecycle.enterDeviceStep();
                    try {
                        VerbsConnection c = completeHandshake(device, mine, psn, peer, reply, t);
                        retirePredecessors(owner, ownerIncarnation);
                        return c;
                    } finally {
                        lifecycle.leaveDeviceStep();
                    }
                });
    }

    /**
     * A handshake with the owner incarnation {@code ownerIncarnation} at {@code owner} succeeded: any
     * other incarnation that was there is gone (an endpoint serves one manager at a time). Its slots
     * are forgotten and its queue pairs leave service ({@link #retire}). Under the read side of the lifecycle.
     */
    private void retirePredecessors(Endpoint owner, String ownerIncarnation) {
        retire(k -> k.owner().equals(owner) && !k.incarnation().equals(ownerIncarnation),
                "the manager at " + owner + " is gone: incarnation " + ownerIncarnation + " answers there now");
    }

    /** The reply (or failure {@code t}) of a handshake, under the read side of the lifecycle. */
    private VerbsConnection completeHandshake(VerbsDevice device, QueuePair qp, int psn, String peer, byte[] reply, Throwable t) {
        if (!handshaking.remove(qp)) {          // close destroyed it: touch nothing
            throw new TransportException(TransportException.Kind.INTERNAL, "ibverbs queue-pair handshake with " + peer
                    + " ended by close: the ibverbs transport is closed");
        }
        try {
            if (t != null) {
                throw VerbsTransport.failure(t);
            }
            VerbsWire.Handshake answer = VerbsWire.Handshake.decodeMessage(reply);
            VerbsWire.Endpoint remote = answer.endpoint();
            QueuePairLifecycle.connect(device, qp, remote, psn);
            LOG.log(System.Logger.Level.DEBUG, "queue pair {0} on {1} connected to queue pair {2} on {3}",
                    qp.number(), device.name, remote.qpNumber(), peer);
            VerbsConnection c = new VerbsConnection(device, qp, peer, tuning.queueDepth(), tuning.signalEvery());
            created.add(c);
            return c;
        } catch (RuntimeException e) {
            QueuePairLifecycle.closeQuietly(qp);
            TransportException te = VerbsTransport.failure(e);
            boolean kept = te.kind() == TransportException.Kind.TIMEOUT || te.kind() == TransportException.Kind.STALE_TOKEN;
            throw new TransportException(kept ? te.kind() : TransportException.Kind.PEER_UNREACHABLE,
                    "ibverbs queue-pair handshake with " + peer + " failed (remembered for this peer): " + te.getMessage(), te);
        }
    }

    /** Under the write side of the lifecycle, once. */
    private void destroyAll() {
        for (VerbsConnection c : created) {
            c.close();
        }
        created.clear();
        for (QueuePair qp : handshaking) {
            QueuePairLifecycle.closeQuietly(qp);
        }
        handshaking.clear();
    }

    @Override
    public String toString() {
        return groups.size() + " peers";
    }
}
