package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.device.DeviceChoice;
import io.rdma4j.transport.ibverbs.device.DeviceOpening;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.IbverbsException;
import io.rdma4j.transport.ibverbs.ffi.MemoryRegion;
import io.rdma4j.transport.ibverbs.liveness.HolderSweep;
import io.rdma4j.transport.ibverbs.liveness.OwnerSweep;
import io.rdma4j.transport.ibverbs.posting.Chunk;
import io.rdma4j.transport.ibverbs.posting.Stripes;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.transport.ibverbs.posting.VerbsSubmission;
import io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.OwnerQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.PeerGroup;
import io.rdma4j.transport.ibverbs.queuepair.QueuePairLifecycle;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Registered;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The verbs transport of one manager, on every device its device target allows ({@link
 * DeviceChoice}; one {@link VerbsDevice}, with its poller, each).
 *
 * <p><b>Memory.</b> {@link #register} creates a memory region on every device with local write,
 * remote read and remote write (a read-only segment: remote read only, so the device refuses
 * peers' writes); its token context carries the address and size, and per device
 * the device, GID, LID, port and rkey; the lkeys serve ops on memory inside it. {@link
 * #prepareLocal} creates local-write-only regions (one per device) for other caller memory. {@link
 * #release} deregisters: a peer's later access fails with a remote access error from the device.
 *
 * <p><b>Routes.</b> A token's routes pair this manager's devices with the owner's ({@link
 * PeerAffinity#pairs}, only pairs the policy allows). Large ops are striped over every route.
 *
 * <p><b>Queue pairs.</b> {@code rdma.ibverbs.qpsPerPeer} RC queue pairs per (local device, peer
 * manager endpoint, peer device), each created on first use ({@link HolderQueuePairs}). An op of at
 * least two minimum stripes is striped across them ({@link Stripes}); smaller ops take turns.
 *
 * <p><b>What is checked, and where.</b> RDMA is one-sided: the owner's CPU does not see reads and
 * writes. The owner checks a token once, on its first use by this transport: incarnation, id and
 * access key, and that the token's range lies inside the registration (a control-plane round trip,
 * cached per token; its answer also says whether the registration is read-only, and writes to a
 * read-only one then fail before anything is posted). After that only the device checks: the rkey,
 * the region's bounds and access (no remote write on a read-only registration's region). A
 * buffer released later has its region deregistered, so access through a cached token fails with
 * a remote access error ({@link TransportException.Kind#REMOTE_ACCESS}); an owner restarted on the
 * same endpoint has new regions and queue pairs, so stale queue pairs fail (retry exceeded).
 */
public final class VerbsTransport implements Transport {

    private static final System.Logger LOG = System.getLogger(VerbsTransport.class.getName());

    /**
     * One way to a registration: local device number {@code localIndex} paired with one of the
     * owner's regions; {@code peers} names the queue pairs that lead there ({@link HolderQueuePairs#group}).
     */
    record Route(VerbsDevice local, int localIndex, VerbsWire.RemoteMr remote, PeerGroup.Key peers) {
    }

    /** A decoded token: the registration, and its routes (those peer affinity allows), best local device first. */
    record Remote(VerbsWire.RemoteRegion region, List<Route> routes) {
    }

    private final TransportContext context;
    private final List<VerbsDevice> devices;
    /** The same, for the loop of a thread that polls them while it waits ({@code SubmissionFuture.runOnJoin}). */
    private final VerbsDevice[] deviceArray;
    private final List<String> deviceNames;
    private final PeerAffinity affinity;
    private final Duration qpInitTimeout;
    private final TokenChecks tokenChecks;
    private final VerbsTuning tuning;
    private final QueuePairLifecycle queuePairs = new QueuePairLifecycle();
    private final HolderQueuePairs holderSide;
    /** A connection for a chunk's lane in place of its broken one ({@link VerbsSubmission}); one for all submissions. */
    private final Function<Chunk, CompletableFuture<VerbsConnection>> replacement;
    private final OwnerQueuePairs ownerSide;
    private final OwnerSweep ownerSweep;
    private final HolderSweep holderSweep;
    private final Map<Long, List<MemoryRegion>> registrations = new ConcurrentHashMap<>();
    /** How long an abort waits for the flush before it destroys the queue pairs ({@link VerbsSubmission}). */
    private volatile long flushBoundNanos = VerbsSubmission.FLUSH_BOUND_NANOS;
    private volatile boolean closed;

    private VerbsTransport(TransportContext context, List<VerbsDevice> devices, VerbsTuning tuning) {
        this.context = context;
        this.devices = List.copyOf(devices);
        this.deviceArray = devices.toArray(VerbsDevice[]::new);
        this.deviceNames = devices.stream().map(d -> d.name).toList();
        this.affinity = context.settings().get(VerbsSettings.PEER_AFFINITY);
        this.qpInitTimeout = context.settings().get(VerbsSettings.QP_INIT_TIMEOUT);
        this.tokenChecks = new TokenChecks(context, qpInitTimeout);
        for (VerbsDevice d : devices) {
            tuning = tuning.clampTo(d.name, d.attributes, d.cq.entries(), note -> LOG.log(System.Logger.Level.INFO, note));
        }
        this.tuning = tuning;
        this.holderSide = new HolderQueuePairs(context, this.tuning, qpInitTimeout, this::ownerAdded, queuePairs);
        this.replacement = c -> holderSide.connection(c.group, c.slot);
        this.ownerSide = new OwnerQueuePairs(context, this.tuning, queuePairs);
        Duration check = context.settings().get(VerbsSettings.PEER_CHECK_INTERVAL);
        Duration silence = context.settings().get(VerbsSettings.PEER_SILENCE_LIMIT);
        this.ownerSweep = new OwnerSweep(context, ownerSide, check, silence);
        this.holderSweep = new HolderSweep(context, holderSide, check, silence);
    }

    static VerbsTransport open(TransportContext context) {
        VerbsTuning tuning = VerbsTuning.of(context.settings());
        List<VerbsDevice> devices = DeviceOpening.openChosen(context.settings().get(VerbsSettings.TARGET),
                tuning.completionQueueEntries(), tuning.busyPollNanos());
        try {
            VerbsTransport t = new VerbsTransport(context, devices, tuning);
            context.control().onRequest(t::handle);
            return t;
        } catch (RuntimeException e) {
            devices.forEach(VerbsDevice::close);
            throw e;
        }
    }

    @Override
    public String name() {
        return VerbsTransportProvider.NAME;
    }

    /** Registers {@code segment} on every device of this transport; on failure deregisters what it registered. */
    private List<MemoryRegion> registerEverywhere(MemorySegment segment, int access) {
        List<MemoryRegion> made = new ArrayList<>(devices.size());
        try {
            for (VerbsDevice d : devices) {
                made.add(d.pd.register(segment, access));
            }
        } catch (RuntimeException e) {
            VerbsLocal.closeAll(made);
            throw e;
        }
        return made;
    }

    /**
     * A memory region per device, with local write, remote read and remote write; the token
     * context names every one (device, GID, LID, port, rkey), with the address and size. A
     * read-only segment: see {@link RegionAccess}.
     */
    @Override
    public Registered register(long bufferId, MemorySegment segment) {
        requireOpen();
        List<MemoryRegion> mrs;
        try {
            mrs = registerEverywhere(segment, RegionAccess.of(segment));
        } catch (IbverbsException e) {
            return RegionAccess.declinedOrThrow(segment, e);
        }
        registrations.put(bufferId, mrs);
        List<VerbsWire.RemoteMr> remote = new ArrayList<>(mrs.size());
        for (int i = 0; i < mrs.size(); i++) {
            VerbsDevice d = devices.get(i);
            remote.add(new VerbsWire.RemoteMr(d.name, d.gid, d.port.lid(), VerbsDevice.PORT, mrs.get(i).rkey()));
        }
        return Registered.context(VerbsWire.context(mrs.getFirst().address(), mrs.getFirst().length(), remote),
                new VerbsLocal(mrs, false));
    }

    @Override
    public void release(long bufferId) {
        List<MemoryRegion> mrs = registrations.remove(bufferId);
        if (mrs != null) {
            VerbsLocal.closeAll(mrs);
        }
    }

    @Override
    public boolean preparesLocalMemory() {
        return true;
    }

    @Override
    public LocalMemory prepareLocal(MemorySegment segment) {
        requireOpen();
        return new VerbsLocal(registerEverywhere(segment, Ibv.IBV_ACCESS_LOCAL_WRITE), true);
    }

    /**
     * Decodes the token's context and pairs this transport's devices with the owner's ({@link
     * PeerAffinity#pairs}, keeping only pairs the policy allows).
     *
     * @throws TransportException PROTOCOL for a context of another version or garbled; PEER_UNREACHABLE
     *                            when no local device may pair with any of the owner's
     */
    @Override
    public Object decodeContext(RemoteBufferRef remote) {
        VerbsWire.RemoteRegion r = VerbsWire.decodeContext(remote.context());
        List<OptionalInt> pairs = affinity.pairs(deviceNames, r.devices());
        List<Route> routes = new ArrayList<>();
        for (int i = 0; i < pairs.size(); i++) {
            OptionalInt j = pairs.get(i);
            if (j.isPresent() && affinity.canPair(deviceNames.get(i), r.mrs.get(j.getAsInt()).device())) {
                VerbsWire.RemoteMr mr = r.mrs.get(j.getAsInt());
                routes.add(new Route(devices.get(i), i, mr, new PeerGroup.Key(devices.get(i), remote.owner(),
                        remote.incarnation(), mr.device())));
            }
        }
        if (routes.isEmpty()) {
            throw new TransportException(TransportException.Kind.PEER_UNREACHABLE, "peer affinity " + affinity
                    + " pairs none of the local devices " + deviceNames + " with the owner's " + r.devices());
        }
        return new Remote(r, List.copyOf(routes));
    }

    @Override
    public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
        VerbsSubmission s = new VerbsSubmission(ops.size(), deviceArray, context.watchdog(), flushBoundNanos, replacement,
                tuning.signalEvery());
        if (closed) {
            s.future.completeExceptionally(new TransportException(TransportException.Kind.INTERNAL, "the ibverbs transport is closed"));
            return s.future;
        }
        if (deadline.isExpired()) {
            s.future.completeExceptionally(new TransportException(TransportException.Kind.TIMEOUT,
                    "ibverbs: the deadline passed before " + ops.size() + " op(s) started"));
            return s.future;
        }
        s.guardedBy(context.watchdog().arm(deadline, () -> s.timedOut(new TransportException(
                TransportException.Kind.TIMEOUT, "ibverbs did not finish " + ops.size() + " op(s) by the deadline"))));
        List<CompletableFuture<Void>> waiting = null;     // ops still waiting for a handshake or the owner's check
        ActionLanes lanes = new ActionLanes(holderSide, tuning.qpsPerPeer());
        for (int i = 0; i < ops.size(); i++) {
            CompletableFuture<Void> f = start(s, i, ops.get(i), lanes);
            if (f != null) {
                (waiting == null ? waiting = new ArrayList<>() : waiting).add(f);
            }
        }
        s.postGathered();       // the ops to one queue pair, gathered: one chain of work requests
        if (waiting == null) {
            s.sealed();
        } else {
            CompletableFuture.allOf(waiting.toArray(CompletableFuture[]::new)).whenComplete((ok, t) -> s.sealed());
        }
        return s.future;
    }

    /**
     * Checks one op, then (once its token is checked and the queue pairs of its stripes are
     * connected) queues its chunks. The op's lanes are its routes times
     * {@code rdma.ibverbs.qpsPerPeer}; it is split into stripes over them ({@link Stripes}),
     * spread over the routes (device pairs) first, and each stripe at its device's maximum message
     * size ({@link OpChunks}). Small ops take turns on the lanes, which the action's ops share
     * ({@link ActionLanes}: looked up once per action and peer, no arrays per op).
     *
     * @return null when the op was queued (or failed) at once, its queue pairs connected and its
     *         token checked before; otherwise a future completing once it is
     */
    private CompletableFuture<Void> start(VerbsSubmission s, int index, TransportOp op, ActionLanes shared) {
        Remote remote = (Remote) op.remoteContext();
        VerbsWire.RemoteRegion r = remote.region();
        long length = op.local().byteSize();
        if (op.remoteOffset() + length > r.size) {
            s.fail(index, ErrorCode.OUT_OF_RANGE.toException("the range of " + length + " bytes at offset " + op.remoteOffset()
                    + " lies outside buffer " + op.remote().bufferId() + " (" + r.size + " bytes)"));
            return null;
        }
        if (!(op.localMemory() instanceof VerbsLocal local)) {
            s.fail(index, new TransportException(TransportException.Kind.LOCAL_ACCESS,
                    "ibverbs needs prepared local memory for the op's local segment, got " + op.localMemory()));
            return null;
        }
        List<Route> routes = remote.routes();
        int laneCount = routes.size() * tuning.qpsPerPeer();
        int stripes = Stripes.count(length, laneCount, tuning.minStripeBytes());
        if (stripes == 1) {
            return startSmall(s, index, op, local, r, routes, shared);
        }
        PeerGroup first = holderSide.group(routes.getFirst().peers());
        int firstLane = first.firstSlot(stripes);
        Route[] via = new Route[stripes];
        OpChunks.Lane[] where = new OpChunks.Lane[stripes];
        @SuppressWarnings("unchecked")
        CompletableFuture<VerbsConnection>[] lanes = new CompletableFuture[stripes];
        for (int i = 0; i < stripes; i++) {
            int lane = Math.floorMod(firstLane + i, laneCount);
            int route = lane % routes.size();
            via[i] = routes.get(route);
            where[i] = new OpChunks.Lane(route == 0 ? first : holderSide.group(via[i].peers()), lane / routes.size());
            lanes[i] = holderSide.connection(where[i].group(), where[i].slot());
        }
        CompletableFuture<Void> checked = tokenChecks.checked(op, r);
        if (readyNow(checked, lanes)) {     // the usual case after an op to this peer and token: no stages
            OpChunks.enqueue(s, index, op, local, r, via, where, lanes, true);
            return null;
        }
        return CompletableFuture.allOf(CompletableFuture.allOf(lanes), checked).handle((ok, t) -> {
            if (t != null) {
                s.fail(index, failure(t));
                return null;
            }
            OpChunks.enqueue(s, index, op, local, r, via, where, lanes, false);
            return null;
        });
    }

    /** {@link #start} for an op of one stripe, on the next of the lanes the action's small ops share. */
    private CompletableFuture<Void> startSmall(VerbsSubmission s, int index, TransportOp op, VerbsLocal local,
                                               VerbsWire.RemoteRegion r, List<Route> routes, ActionLanes shared) {
        shared.use(routes);
        int lane = shared.nextLane();
        Route via = shared.via(lane);
        OpChunks.Lane where = shared.where(lane);
        CompletableFuture<Void> checked = tokenChecks.checked(op, r);
        VerbsConnection ready;
        if (checked.isDone() && !checked.isCompletedExceptionally() && (ready = shared.ready(lane)) != null) {
            OpChunks.enqueueSmall(s, index, op, local, r, via, where, ready, true);
            return null;
        }
        CompletableFuture<VerbsConnection> connection = shared.connection(lane);
        return CompletableFuture.allOf(connection, checked).handle((ok, t) -> {
            if (t != null) {
                s.fail(index, failure(t));
                return null;
            }
            OpChunks.enqueueSmall(s, index, op, local, r, via, where, connection.join(), false);
            return null;
        });
    }

    private static boolean readyNow(CompletableFuture<Void> checked, CompletableFuture<VerbsConnection>[] lanes) {
        if (!checked.isDone() || checked.isCompletedExceptionally()) {
            return false;
        }
        for (CompletableFuture<VerbsConnection> lane : lanes) {
            if (!lane.isDone() || lane.isCompletedExceptionally()) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------ the control channel

    /**
     * Serves the control channel: handshakes from peers (the first one plans the liveness sweep of
     * their queue pairs, {@link OwnerSweep}), checks of tokens of this manager, and liveness probes
     * of owners and holders ({@link HolderSweep}), answered with this manager's incarnation.
     */
    private byte[] handle(Endpoint from, byte[] payload) {
        requireOpen();
        ByteBuffer b = ByteBuffer.wrap(payload);
        VerbsWire.requireVersion(b.get());
        byte type = b.get();
        if (type == VerbsWire.CHECK) {
            VerbsWire.Check check = VerbsWire.Check.decode(b);
            try {
                LocalBuffer checked = context.registrations().lookup(check.incarnation(), check.bufferId(), check.accessKey(),
                        check.offset(), check.length());
                return VerbsWire.allowed(checked.readOnly());
            } catch (BufferAccessException e) {
                return VerbsWire.answer(ErrorCode.of(e.reason()).wire(), e.getMessage());
            }
        }
        if (type == VerbsWire.PROBE) {
            VerbsWire.Probe.decode(b);
            return new VerbsWire.Probe(HexFormat.of().formatHex(context.incarnation())).encode();
        }
        if (type != VerbsWire.HANDSHAKE) {
            throw new IllegalArgumentException("unknown ibverbs request type " + type);
        }
        VerbsWire.Handshake request = VerbsWire.Handshake.decode(b);
        int i = deviceNames.indexOf(request.toDevice());
        if (i < 0) {
            throw new IllegalArgumentException("no ibverbs device " + request.toDevice() + " here: this manager uses " + deviceNames);
        }
        byte[] reply = ownerSide.accept(from, devices.get(i), request);
        ownerSweep.holderArrived(from);
        return reply;
    }

    /** Sets how long later submissions wait for a flush before they destroy the queue pairs instead (for tests). */
    void flushBound(Duration bound) {
        flushBoundNanos = bound.toNanos();
    }

    /** The devices this transport uses, best ranked first (for tests). */
    List<VerbsDevice> devices() {
        return devices;
    }

    /**
     * Takes this side's queue pairs to the owner incarnation {@code incarnation} at {@code owner}
     * out of service as the liveness sweep does for an owner found gone ({@link
     * HolderQueuePairs#retireOwner}): each is destroyed once drained (for tests).
     *
     * @return how many queue pairs left service, or -1 when there were none to that owner
     */
    int retireOwner(Endpoint owner, String incarnation, String why) {
        return holderSide.retireOwner(new HolderSweep.Owner(owner, incarnation), why);
    }

    /** Liveness rounds that ended so far, of both sweeps (for tests: the first one runs cold code). */
    long sweepRoundsEnded() {
        return holderSweep.roundsEnded() + ownerSweep.roundsEnded();
    }

    /** Connected queue pairs this side created to other managers' devices, not broken (for tests). */
    int liveQueuePairs() {
        return holderSide.liveQueuePairs();
    }

    /** Queue pairs this side created that left service and are not destroyed yet (for tests). */
    int brokenQueuePairsNotDestroyed() {
        return holderSide.brokenNotDestroyed();
    }

    /** Queue pairs this side connected on peers' request, in service now (for tests). */
    int acceptedQueuePairs() {
        return ownerSide.acceptedQueuePairs();
    }

    /** Holders this side keeps accepted queue pairs for that answered a liveness probe at their endpoint (for tests). */
    int reachableHolders() {
        return ownerSide.reachableHolders();
    }

    /** Liveness probes of holders that ended without an answer (failed, or timed out), whatever that proved (for tests). */
    long unansweredProbes() {
        return ownerSweep.unansweredProbes();
    }

    /** Connections this side made and keeps track of, broken ones not yet seen destroyed included (for tests). */
    int trackedConnections() {
        return holderSide.trackedConnections();
    }

    /** Owner manager incarnations this side keeps queue pairs, or a failed handshake, for (for tests). */
    int owners() {
        return holderSide.owners();
    }

    /** Told by {@link HolderQueuePairs} when it begins to keep queue pairs to an owner (field not yet assigned when they are made). */
    private void ownerAdded() {
        holderSweep.ownerAdded();
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the ibverbs transport is closed");
        }
    }

    /** {@code t} as the transport reports it: a {@link TransportException} as it is (unwrapped from a {@link CompletionException}), anything else as an internal one. */
    public static TransportException failure(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        return c instanceof TransportException te ? te
                : new TransportException(TransportException.Kind.INTERNAL, "ibverbs failed: " + c, c);
    }

    /** Destroys every queue pair, region and queue (through the device). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ownerSweep.close();
        holderSweep.close();
        queuePairs.close();
        registrations.clear();
        devices.forEach(VerbsDevice::close);
    }

    @Override
    public String toString() {
        return "ibverbs on " + deviceNames + " (" + Arrays.asList(registrations.size() + " registrations",
                holderSide.toString(), ownerSide.toString()) + ")";
    }
}
