package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.MemoryRegion;
import io.rdma4j.ibverbs.ffi.QueuePair;
import io.rdma4j.ibverbs.ffi.QueuePairInit;
import io.rdma4j.ibverbs.ffi.ReadyToReceive;
import io.rdma4j.ibverbs.ffi.ReadyToSend;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Registered;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The verbs transport of one manager, on one device ({@link VerbsDevice}).
 *
 * <p><b>Memory.</b> {@link #register} creates a memory region with local write, remote read and
 * remote write; its token context carries the device, GID, LID, port, address, rkey and size, and
 * its lkey serves ops on memory inside it. {@link #prepareLocal} creates a local-write-only region
 * for other caller memory. {@link #release} deregisters: a peer's later access fails with a remote
 * access error from the device.
 *
 * <p><b>Queue pairs.</b> One RC queue pair per (peer manager endpoint, peer device), created on
 * first use and connected by a handshake over the control channel (QP number, PSN, GID, LID, MTU;
 * both sides INIT, RTR, RTS) within {@code rdma.qpInitTimeout}. A failed handshake is remembered
 * for its key and reported to later callers; a queue pair that went to ERROR is replaced.
 *
 * <p><b>What is checked, and where.</b> RDMA is one-sided: the owner's CPU does not see reads and
 * writes. The owner checks a token once, on its first use by this transport: incarnation, id and
 * access key, and that the token's range lies inside the registration (a control-plane round trip,
 * cached per token). After that only the device checks: the rkey, and the region's bounds. A
 * buffer released later has its region deregistered, so access through a cached token fails with
 * a remote access error ({@link TransportException.Kind#REMOTE_ACCESS}); an owner restarted on the
 * same endpoint has new regions and queue pairs, so stale queue pairs fail (retry exceeded).
 */
final class VerbsTransport implements Transport {

    private static final int QP_ACCESS = Ibv.IBV_ACCESS_LOCAL_WRITE | Ibv.IBV_ACCESS_REMOTE_WRITE
            | Ibv.IBV_ACCESS_REMOTE_READ;
    private static final System.Logger LOG = System.getLogger(VerbsTransport.class.getName());

    private final TransportContext context;
    private final VerbsDevice device;
    private final PeerAffinity affinity;
    private final Duration qpInitTimeout;
    private final VerbsTuning tuning;
    private final SecureRandom random = new SecureRandom();
    private final Map<Long, MemoryRegion> registrations = new ConcurrentHashMap<>();
    private final Map<String, CompletableFuture<VerbsConnection>> connections = new ConcurrentHashMap<>();
    private final List<QueuePair> accepted = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private VerbsTransport(TransportContext context, VerbsDevice device, VerbsTuning tuning) {
        this.context = context;
        this.device = device;
        this.affinity = context.settings().get(IbverbsSettings.PEER_AFFINITY);
        this.qpInitTimeout = context.settings().get(IbverbsSettings.QP_INIT_TIMEOUT);
        this.tuning = tuning.clampTo(device.name, device.attributes, device.cq.entries(),
                note -> LOG.log(System.Logger.Level.INFO, note));
    }

    static VerbsTransport open(TransportContext context) {
        VerbsTuning tuning = VerbsTuning.of(context.settings());
        VerbsDevice device = VerbsDevice.open(context.settings().get(IbverbsSettings.TARGET), tuning.completionQueueEntries(),
                tuning.busyPollNanos());
        try {
            VerbsTransport t = new VerbsTransport(context, device, tuning);
            context.control().onRequest(t::handle);
            return t;
        } catch (RuntimeException e) {
            device.close();
            throw e;
        }
    }

    @Override
    public String name() {
        return IbverbsTransportProvider.NAME;
    }

    /** Local memory: a memory region whose lkey ops use. */
    record VerbsLocal(MemoryRegion region, boolean owned) implements LocalMemory {
        @Override
        public MemorySegment segment() {
            return region.segment();
        }

        @Override
        public void close() {
            if (owned) {
                try {
                    region.close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "deregistering local memory {0} failed: {1}", region, e.getMessage());
                }
            }
        }
    }

    @Override
    public Registered register(long bufferId, MemorySegment segment) {
        requireOpen();
        MemoryRegion mr = device.pd.register(segment, QP_ACCESS);
        registrations.put(bufferId, mr);
        return Registered.context(VerbsWire.context(device.name, device.gid, device.port.lid(), VerbsDevice.PORT,
                mr.address(), mr.rkey(), mr.length()), new VerbsLocal(mr, false));
    }

    @Override
    public void release(long bufferId) {
        MemoryRegion mr = registrations.remove(bufferId);
        if (mr != null) {
            mr.close();
        }
    }

    @Override
    public boolean preparesLocalMemory() {
        return true;
    }

    @Override
    public LocalMemory prepareLocal(MemorySegment segment) {
        requireOpen();
        return new VerbsLocal(device.pd.register(segment, Ibv.IBV_ACCESS_LOCAL_WRITE), true);
    }

    @Override
    public Object decodeContext(RemoteBufferRef remote) {
        VerbsWire.RemoteRegion r = VerbsWire.decodeContext(remote.context());
        if (!affinity.canPair(device.name, r.device)) {
            throw new TransportException(TransportException.Kind.PEER_UNREACHABLE, "peer affinity " + affinity
                    + " does not pair local device " + device.name + " with the owner's " + r.device);
        }
        return r;
    }

    @Override
    public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
        VerbsSubmission s = new VerbsSubmission(ops.size());
        if (closed) {
            s.future.completeExceptionally(new TransportException(TransportException.Kind.INTERNAL, "the ibverbs transport is closed"));
            return s.future;
        }
        if (deadline.isExpired()) {
            s.future.completeExceptionally(new TransportException(TransportException.Kind.TIMEOUT,
                    "ibverbs: the deadline passed before " + ops.size() + " op(s) started"));
            return s.future;
        }
        Watchdog.Guard guard = context.watchdog().arm(deadline, () -> s.abort(new TransportException(
                TransportException.Kind.TIMEOUT, "ibverbs did not finish " + ops.size() + " op(s) by the deadline")));
        s.future.whenComplete((ok, t) -> guard.disarm());
        CompletableFuture<?>[] started = new CompletableFuture<?>[ops.size()];
        for (int i = 0; i < ops.size(); i++) {
            started[i] = start(s, i, ops.get(i));
        }
        CompletableFuture.allOf(started).whenComplete((ok, t) -> s.sealed());
        return s.future;
    }

    /** Checks one op, then (once its token is checked and its queue pair connected) queues its chunks. */
    private CompletableFuture<Void> start(VerbsSubmission s, int index, TransportOp op) {
        VerbsWire.RemoteRegion r = (VerbsWire.RemoteRegion) op.remoteContext();
        long length = op.local().byteSize();
        if (op.remoteOffset() + length > r.size) {
            s.fail(index, ErrorCode.OUT_OF_RANGE.toException("the range of " + length + " bytes at offset " + op.remoteOffset()
                    + " lies outside buffer " + op.remote().bufferId() + " (" + r.size + " bytes)"));
            return CompletableFuture.completedFuture(null);
        }
        if (!(op.localMemory() instanceof VerbsLocal local)) {
            s.fail(index, new TransportException(TransportException.Kind.LOCAL_ACCESS,
                    "ibverbs needs prepared local memory for the op's local segment, got " + op.localMemory()));
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<VerbsConnection> connection = connection(op.remote().owner(), r.device);
        CompletableFuture<Void> checked = checked(op.remote(), r);
        return CompletableFuture.allOf(connection, checked).handle((ok, t) -> {
            if (t != null) {
                s.fail(index, transportFailure(t));
                return null;
            }
            VerbsConnection c = connection.join();
            s.uses(c);
            List<VerbsConnection.Chunk> chunks = chunks(s, index, op, local, r);
            if (s.expect(chunks.size())) {
                c.enqueue(chunks);
            }
            return null;
        });
    }

    private List<VerbsConnection.Chunk> chunks(VerbsSubmission s, int index, TransportOp op, VerbsLocal local,
                                               VerbsWire.RemoteRegion r) {
        int opcode = op.type() == TransportOp.OpType.READ_INTO_LOCAL ? Ibv.IBV_WR_RDMA_READ : Ibv.IBV_WR_RDMA_WRITE;
        long max = device.maxMessageBytes();
        long total = op.local().byteSize();
        List<VerbsConnection.Chunk> chunks = new ArrayList<>((int) ((total + max - 1) / max));
        for (long at = 0; at < total; at += max) {
            int n = (int) Math.min(max, total - at);
            chunks.add(new VerbsConnection.Chunk(s, index, opcode, op.local().address() + at, n, local.region().lkey(),
                    r.address + op.remoteOffset() + at, r.rkey));
        }
        return chunks;
    }

    private static TransportException transportFailure(Throwable t) {
        Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        return c instanceof TransportException te ? te
                : new TransportException(TransportException.Kind.INTERNAL, "ibverbs failed: " + c, c);
    }

    // ------------------------------------------------------------------ the owner's check, once per token

    private CompletableFuture<Void> checked(RemoteBufferRef ref, VerbsWire.RemoteRegion r) {
        CompletableFuture<Void> f = r.checked;
        if (f != null) {
            return f;
        }
        synchronized (r) {
            if (r.checked == null) {
                byte[] request = VerbsWire.check(HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(), ref.accessKey(),
                        0, ref.size());
                r.checked = context.control().request(ref.owner(), request, Deadline.after(qpInitTimeout, context.clock()))
                        .thenAccept(reply -> {
                            int code = Byte.toUnsignedInt(reply[0]);
                            if (code != 0) {
                                throw ErrorCode.fromWire(code).toException(new String(reply, 1, reply.length - 1,
                                        StandardCharsets.UTF_8));
                            }
                        });
            }
            return r.checked;
        }
    }

    // ------------------------------------------------------------------ queue pairs

    private CompletableFuture<VerbsConnection> connection(Endpoint owner, String peerDevice) {
        String key = owner + "/" + peerDevice;
        CompletableFuture<VerbsConnection> f = connections.get(key);
        if (f != null && !(f.isDone() && !f.isCompletedExceptionally() && f.join().isBroken())) {
            return f;
        }
        return connections.compute(key, (k, old) -> {
            if (old != null && !(old.isDone() && !old.isCompletedExceptionally() && old.join().isBroken())) {
                return old;      // a failed handshake stays: later callers get its failure
            }
            return handshake(owner, peerDevice);
        });
    }

    private QueuePair newQueuePair() {
        return device.pd.createReliableConnectedQueuePair(new QueuePairInit(device.cq, device.cq, tuning.queueDepth(), 1,
                tuning.maxSge(), 1));
    }

    private CompletableFuture<VerbsConnection> handshake(Endpoint owner, String peerDevice) {
        String peer = peerDevice + " of " + owner;
        QueuePair qp;
        int psn = random.nextInt(1 << 24);
        try {
            requireOpen();
            qp = newQueuePair();
            qp.modifyToInit(VerbsDevice.PORT, 0, QP_ACCESS);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.INTERNAL,
                    "ibverbs could not create a queue pair on " + device.name + " for " + peer + ": " + e.getMessage(), e));
        }
        VerbsWire.Endpoint self = new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(),
                device.port.activeMtu());
        return context.control().request(owner, self.encode(VerbsWire.HANDSHAKE, peerDevice),
                        Deadline.after(qpInitTimeout, context.clock()))
                .handle((reply, t) -> {
                    try {
                        if (t != null) {
                            throw transportFailure(t);
                        }
                        ByteBuffer b = ByteBuffer.wrap(reply);
                        VerbsWire.requireVersion(b.get());
                        b.get();
                        VerbsWire.Endpoint remote = VerbsWire.Endpoint.decode(b, new String[1]);
                        connect(qp, remote, psn);
                        LOG.log(System.Logger.Level.DEBUG, "queue pair {0} on {1} connected to queue pair {2} on {3}",
                                qp.number(), device.name, remote.qpNumber(), peer);
                        return new VerbsConnection(device, qp, peer, tuning.queueDepth());
                    } catch (RuntimeException e) {
                        closeQuietly(qp);
                        TransportException te = transportFailure(e);
                        throw new TransportException(te.kind() == TransportException.Kind.TIMEOUT ? te.kind()
                                : TransportException.Kind.PEER_UNREACHABLE, "ibverbs queue-pair handshake with " + peer
                                + " failed (remembered for this peer): " + te.getMessage(), te);
                    }
                });
    }

    /** INIT -> RTR -> RTS towards {@code remote}; {@code psn} is this side's first send PSN. */
    private void connect(QueuePair qp, VerbsWire.Endpoint remote, int psn) {
        int mtu = Math.min(device.port.activeMtu(), remote.mtu());
        qp.modifyToReadyToReceive(new ReadyToReceive(mtu, remote.qpNumber(), remote.psn(),
                Math.min(16, device.attributes.maxQpRdAtom()), 12, VerbsDevice.PORT, remote.lid(), remote.gid(),
                device.gidIndex, 64));
        qp.modifyToReadyToSend(new ReadyToSend(psn, 14, 7, 7, Math.min(16, device.attributes.maxQpInitRdAtom())));
    }

    /** Serves the control channel: handshakes from peers and checks of tokens of this manager. */
    private byte[] handle(Endpoint from, byte[] payload) {
        requireOpen();
        ByteBuffer b = ByteBuffer.wrap(payload);
        VerbsWire.requireVersion(b.get());
        byte type = b.get();
        if (type == VerbsWire.CHECK) {
            byte[] incarnation = VerbsWire.bytes(b);
            long id = b.getLong();
            byte[] key = VerbsWire.bytes(b);
            try {
                context.registrations().lookup(incarnation, id, key, b.getLong(), b.getLong());
                return VerbsWire.answer(0, "");
            } catch (BufferAccessException e) {
                return VerbsWire.answer(ErrorCode.of(e.reason()).wire(), e.getMessage());
            }
        }
        if (type != VerbsWire.HANDSHAKE) {
            throw new IllegalArgumentException("unknown ibverbs request type " + type);
        }
        String[] wanted = new String[1];
        VerbsWire.Endpoint remote = VerbsWire.Endpoint.decode(b, wanted);
        if (!wanted[0].equals(device.name)) {
            throw new IllegalArgumentException("no ibverbs device " + wanted[0] + " here: this manager uses " + device.name);
        }
        QueuePair qp = newQueuePair();
        int psn = random.nextInt(1 << 24);
        try {
            qp.modifyToInit(VerbsDevice.PORT, 0, QP_ACCESS);
            connect(qp, remote, psn);
        } catch (RuntimeException e) {
            closeQuietly(qp);
            throw e;
        }
        accepted.add(qp);
        return new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(), device.port.activeMtu())
                .encode(VerbsWire.HANDSHAKE, remote.device());
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

    /** Destroys every queue pair, region and queue (through the device). Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (CompletableFuture<VerbsConnection> f : connections.values()) {
            if (f.isDone() && !f.isCompletedExceptionally()) {
                f.join().close();
            }
        }
        accepted.forEach(VerbsTransport::closeQuietly);
        registrations.clear();
        device.close();
    }

    @Override
    public String toString() {
        return "ibverbs on " + device + " (" + Arrays.asList(registrations.size() + " registrations",
                connections.size() + " peers") + ")";
    }
}
