package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.QueuePair;
import io.rdma4j.ibverbs.ffi.QueuePairInit;
import io.rdma4j.ibverbs.ffi.ReadyToReceive;
import io.rdma4j.ibverbs.ffi.ReadyToSend;
import io.rdma4j.spi.BufferAccessException;
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
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Predicate;

/**
 * The queue pairs of one transport: up to {@code qpsPerPeer} RC queue pairs per (local device,
 * peer manager, peer device), each created on first use and connected by a handshake over the
 * control channel (QP number, PSN, GID, LID, MTU; both sides INIT, RTR, RTS) within
 * {@code rdma.qpInitTimeout}; and the passive side of that handshake.
 *
 * <p>A failed handshake is remembered for its (local device, peer incarnation, peer device) and
 * reported to every later caller, on every slot, instead of being retried; an owner restarted on
 * the same endpoint has a new incarnation and gets a new handshake. A queue pair that went to ERROR is
 * replaced by a new one on its slot for later ops; the old one is destroyed once its outstanding
 * work requests have drained ({@link VerbsConnection}).
 *
 * <p>A handshake answered by an owner incarnation takes the queue pairs to any other incarnation at that
 * endpoint out of service: that manager is gone; so does {@link ActiveSweep} for an owner it found gone
 * (the failed handshake goes too). The passive side refuses a handshake addressed to another incarnation.
 *
 * <p>The passive side keeps one queue pair per slot of each holder ({@link PassiveQueuePairs}): a
 * new handshake for a slot destroys the queue pair it replaces, a holder's new incarnation on an
 * endpoint those of its predecessor, and the liveness sweep ({@link PassiveSweep}) those of a
 * holder it found gone ({@link #retireGone}).
 *
 * <p><b>Close.</b> Every step that touches a device (creating, connecting or destroying a queue
 * pair) runs under the read side of {@link #lifecycle}; {@link #close} takes the write side, so it
 * waits for those steps and they never start after it: a handshake whose reply comes after close
 * finds its queue pair destroyed by close and touches nothing native. Every queue pair is
 * destroyed exactly once, before the devices close.
 *
 * <p>Thread-safe.
 */
final class VerbsPeers implements AutoCloseable {

    static final int QP_ACCESS = Ibv.IBV_ACCESS_LOCAL_WRITE | Ibv.IBV_ACCESS_REMOTE_WRITE | Ibv.IBV_ACCESS_REMOTE_READ;
    private static final System.Logger LOG = System.getLogger(VerbsPeers.class.getName());

    private final TransportContext context;
    private final VerbsTuning tuning;
    private final Duration qpInitTimeout;
    private final SecureRandom random = new SecureRandom();
    private final String incarnation;
    private final Map<PeerGroup.Key, PeerGroup> groups = new ConcurrentHashMap<>();
    private final PassiveQueuePairs<QueuePair> accepted;
    /** Every connection made and not yet seen destroyed, replaced ones that still drain included; pruned on each handshake. */
    private final Set<VerbsConnection> created = ConcurrentHashMap.newKeySet();
    /** Queue pairs of handshakes that await their reply: close destroys them, a reply after close finds them gone. */
    private final Set<QueuePair> handshaking = ConcurrentHashMap.newKeySet();
    /** Read side: a step that touches a device; write side: {@link #close}. */
    private final ReentrantReadWriteLock lifecycle = new ReentrantReadWriteLock();
    /** Told when a group of queue pairs to an owner is added ({@link ActiveSweep#ownerAdded}). */
    private final Runnable groupAdded;
    private volatile boolean closed;

    VerbsPeers(TransportContext context, VerbsTuning tuning, Duration qpInitTimeout, Runnable groupAdded) {
        this.context = context;
        this.groupAdded = groupAdded;
        this.tuning = tuning;
        this.qpInitTimeout = qpInitTimeout;
        this.incarnation = HexFormat.of().formatHex(context.incarnation());
        this.accepted = new PassiveQueuePairs<>(context.clock());
    }

    /**
     * The slots towards one owner incarnation: an owner restarted on the same endpoint is a new
     * peer, so a handshake that failed with its predecessor is not held against it.
     */
    PeerGroup group(PeerGroup.Key key) {
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
    CompletableFuture<VerbsConnection> connection(PeerGroup g, int slot) {
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
    List<ActiveSweep.Owner> quietOwners(long quietNanos) {
        List<Map.Entry<ActiveSweep.Owner, Long>> uses = new ArrayList<>();
        groups.forEach((k, g) -> uses.add(Map.entry(k.ownerIncarnation(), g.lastUse)));
        return ActiveSweep.quiet(uses, context.clock().nanoTime(), quietNanos);
    }

    /** Owner incarnations this side keeps queue pairs (or a failed handshake) for. */
    int owners() {
        return (int) groups.keySet().stream().map(PeerGroup.Key::ownerIncarnation).distinct().count();
    }

    /**
     * The holder side: forgets the groups of {@code gone}, an owner incarnation found gone, a failed
     * handshake included, and takes their queue pairs out of service ({@code why}, {@link #retire});
     * nothing once this side closed (close destroyed them).
     *
     * @return how many queue pairs left service, or -1 when there was no group to forget
     */
    int retireOwner(ActiveSweep.Owner gone, String why) {
        lifecycle.readLock().lock();
        try {
            int n = closed ? -1 : retire(k -> k.ownerIncarnation().equals(gone), why);
            created.removeIf(VerbsConnection::isDestroyed);
            return n;
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /**
     * Forgets the groups {@code which} accepts; their queue pairs leave service ({@code why}), which flushes
     * what is in flight on them; each is destroyed once drained. Under the read side of {@link #lifecycle}.
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

    /** Queue pairs this side connected on peers' request (the passive side), in service now. */
    int passiveQueuePairs() {
        return accepted.size();
    }

    /** The holders this side keeps passive queue pairs for that did not handshake within the last {@code quietNanos}. */
    List<PassiveQueuePairs.Holder> quietHolders(long quietNanos) {
        return accepted.quietHolders(quietNanos);
    }

    /** The holder at {@code endpoint} this side keeps passive queue pairs for, or null. */
    PassiveQueuePairs.Holder holderAt(Endpoint endpoint) {
        return accepted.holderAt(endpoint);
    }

    /** Holders this side keeps passive queue pairs for that answered a probe at their endpoint. */
    int reachableHolders() {
        return accepted.reachableHolders();
    }

    /** {@code holder} answered a probe at its endpoint ({@link PassiveQueuePairs#confirmReachable}). */
    void confirmReachable(PassiveQueuePairs.Holder holder) {
        accepted.confirmReachable(holder);
    }

    /**
     * The passive side: destroys the queue pairs of {@code gone}, a holder found gone ({@code why}),
     * unless it or a successor handshook since it was named, or it never answered at its endpoint
     * ({@link PassiveQueuePairs#retireGone}), or this side closed (close destroyed them).
     */
    void retireGone(PassiveQueuePairs.Holder gone, String why) {
        lifecycle.readLock().lock();
        try {
            if (closed) {
                return;
            }
            List<QueuePair> retired = accepted.retireGone(gone);
            if (!retired.isEmpty()) {
                LOG.log(System.Logger.Level.INFO, "holder manager incarnation {0} at {1} is gone ({2}): its {3} passive "
                        + "queue pair(s) are destroyed", gone.incarnation(), gone.endpoint(), why, retired.size());
                destroyRetired(retired, "its holder is gone");
            }
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    /** Destroys passive queue pairs the books took out of service, under the read side of {@link #lifecycle}. */
    private static void destroyRetired(List<QueuePair> retired, String why) {
        for (QueuePair old : retired) {
            LOG.log(System.Logger.Level.DEBUG, "passive queue pair {0} retired: {1}", old.number(), why);
            closeQuietly(old);
        }
    }

    /** Queue pairs of handshakes this side started that await their reply. */
    int handshakingQueuePairs() {
        return handshaking.size();
    }

    /** Connections this side keeps track of: those in service and those broken but not yet seen destroyed. */
    int trackedConnections() {
        return created.size();
    }

    /** Connections this side made whose queue pair left service and is not destroyed yet (its work requests still flushing). */
    int brokenNotDestroyed() {
        return (int) created.stream().filter(c -> c.isBroken() && !c.isDestroyed()).count();
    }

    /** Connected queue pairs this side created and has not seen break, over all peers. */
    int liveQueuePairs() {
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

    private QueuePair newQueuePair(VerbsDevice device) {
        return device.pd.createReliableConnectedQueuePair(new QueuePairInit(device.cq, device.cq, tuning.queueDepth(), 1,
                tuning.maxSge(), 1));
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
        lifecycle.readLock().lock();
        try {
            requireOpen();
            qp = newQueuePair(device);
            qp.modifyToInit(VerbsDevice.PORT, 0, QP_ACCESS);
            handshaking.add(qp);
        } catch (RuntimeException e) {
            if (qp != null) {
                closeQuietly(qp);
            }
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.INTERNAL,
                    "ibverbs could not create a queue pair on " + device.name + " for " + peer + ": " + e.getMessage(), e));
        } finally {
            lifecycle.readLock().unlock();
        }
        QueuePair mine = qp;
        VerbsWire.Handshake request = new VerbsWire.Handshake(incarnation, ownerIncarnation, peerDevice, slot,
                new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(), device.port.activeMtu()));
        return context.control().request(owner, request.encode(), Deadline.after(qpInitTimeout, context.clock()))
                .handle((reply, t) -> {
                    lifecycle.readLock().lock();
                    try {
                        VerbsConnection c = completeHandshake(device, mine, psn, peer, reply, t);
                        retirePredecessors(owner, ownerIncarnation);
                        return c;
                    } finally {
                        lifecycle.readLock().unlock();
                    }
                });
    }

    /**
     * A handshake with the owner incarnation {@code ownerIncarnation} at {@code owner} succeeded: any
     * other incarnation that was there is gone (an endpoint serves one manager at a time). Its slots
     * are forgotten and its queue pairs leave service ({@link #retire}). Under the read side of {@link #lifecycle}.
     */
    private void retirePredecessors(Endpoint owner, String ownerIncarnation) {
        retire(k -> k.owner().equals(owner) && !k.incarnation().equals(ownerIncarnation),
                "the manager at " + owner + " is gone: incarnation " + ownerIncarnation + " answers there now");
    }

    /** The reply (or failure {@code t}) of a handshake, under the read side of {@link #lifecycle}. */
    private VerbsConnection completeHandshake(VerbsDevice device, QueuePair qp, int psn, String peer, byte[] reply, Throwable t) {
        if (!handshaking.remove(qp)) {          // close destroyed it: touch nothing
            throw new TransportException(TransportException.Kind.INTERNAL, "ibverbs queue-pair handshake with " + peer
                    + " ended by close: the ibverbs transport is closed");
        }
        try {
            if (t != null) {
                throw failure(t);
            }
            VerbsWire.Handshake answer = VerbsWire.Handshake.decodeMessage(reply);
            VerbsWire.Endpoint remote = answer.endpoint();
            connect(device, qp, remote, psn);
            LOG.log(System.Logger.Level.DEBUG, "queue pair {0} on {1} connected to queue pair {2} on {3}",
                    qp.number(), device.name, remote.qpNumber(), peer);
            VerbsConnection c = new VerbsConnection(device, qp, peer, tuning.queueDepth());
            created.add(c);
            return c;
        } catch (RuntimeException e) {
            closeQuietly(qp);
            TransportException te = failure(e);
            boolean kept = te.kind() == TransportException.Kind.TIMEOUT || te.kind() == TransportException.Kind.STALE_TOKEN;
            throw new TransportException(kept ? te.kind() : TransportException.Kind.PEER_UNREACHABLE,
                    "ibverbs queue-pair handshake with " + peer + " failed (remembered for this peer): " + te.getMessage(), te);
        }
    }

    /**
     * INIT -> RTR -> RTS towards {@code remote}; {@code psn} is this side's first send PSN. Transport
     * retries: 6 (soft-RoCE treats 7 as "retry forever", so a dead peer's work requests would then
     * never complete and only the op's deadline would end them), ACK timeout about 67 ms.
     */
    private static void connect(VerbsDevice device, QueuePair qp, VerbsWire.Endpoint remote, int psn) {
        int mtu = Math.min(device.port.activeMtu(), remote.mtu());
        qp.modifyToReadyToReceive(new ReadyToReceive(mtu, remote.qpNumber(), remote.psn(),
                Math.min(16, device.attributes.maxQpRdAtom()), 12, VerbsDevice.PORT, remote.lid(), remote.gid(),
                device.gidIndex, 64));
        qp.modifyToReadyToSend(new ReadyToSend(psn, 14, 6, 7, Math.min(16, device.attributes.maxQpInitRdAtom())));
    }

    /**
     * The passive side: creates a queue pair on {@code device} connected to the one {@code request}
     * describes, from the manager at {@code holder}, and returns the reply to send. The queue pair
     * serves the request's slot until a new handshake for that slot, the holder's successor on its
     * endpoint, the sweep finding the holder gone, or close ({@link PassiveQueuePairs}).
     *
     * @throws IllegalStateException if the transport is closed, or the request comes from a holder
     *                               incarnation already succeeded on its endpoint
     * @throws BufferAccessException (stale) if the request addresses another incarnation than this manager's
     */
    byte[] accept(Endpoint holder, VerbsDevice device, VerbsWire.Handshake request) {
        VerbsWire.Endpoint remote = request.endpoint();
        PassiveQueuePairs.Key key = new PassiveQueuePairs.Key(request.fromIncarnation(), remote.device(),
                request.toIncarnation(), device.name, request.slot());
        if (!incarnation.equals(request.toIncarnation())) {
            throw new BufferAccessException(BufferAccessException.Reason.STALE, -1, "the handshake addresses manager incarnation "
                    + request.toIncarnation() + ", but this manager is incarnation " + incarnation
                    + ": that manager is gone from this endpoint (stale token)");
        }
        accepted.requireCurrent(holder, key.holderIncarnation());
        lifecycle.readLock().lock();
        try {
            requireOpen();
            QueuePair qp = newQueuePair(device);
            int psn = random.nextInt(1 << 24);
            List<QueuePair> retired;
            try {
                qp.modifyToInit(VerbsDevice.PORT, 0, QP_ACCESS);
                connect(device, qp, remote, psn);
                retired = accepted.put(holder, key, qp);
            } catch (RuntimeException e) {
                closeQuietly(qp);
                throw e;
            }
            if (!retired.isEmpty()) {
                destroyRetired(retired, "replaced by " + key + " on " + device.name);
            }
            return new VerbsWire.Handshake(incarnation, request.fromIncarnation(), remote.device(), request.slot(),
                    new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(), device.port.activeMtu()))
                    .encode();
        } finally {
            lifecycle.readLock().unlock();
        }
    }

    static TransportException failure(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        return c instanceof TransportException te ? te
                : new TransportException(TransportException.Kind.INTERNAL, "ibverbs failed: " + c, c);
    }

    private static void closeQuietly(QueuePair qp) {
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "destroying queue pair {0} failed: {1}", qp, e.getMessage());
        }
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the ibverbs transport is closed");
        }
    }

    /**
     * Destroys every queue pair, active, passive and mid-handshake (before the devices close), after
     * the device steps under way finished; later ones see the transport closed. Idempotent.
     */
    @Override
    public void close() {
        lifecycle.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (VerbsConnection c : created) {
                c.close();
            }
            created.clear();
            for (QueuePair qp : handshaking) {
                closeQuietly(qp);
            }
            handshaking.clear();
            for (QueuePair qp : accepted.clear()) {
                closeQuietly(qp);
            }
        } finally {
            lifecycle.writeLock().unlock();
        }
    }

    @Override
    public String toString() {
        return groups.size() + " peers";
    }
}
