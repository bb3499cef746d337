package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.MemoryRegion;
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
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The verbs transport of one manager, on one device ({@link VerbsDevice}).
 *
 * <p><b>Memory.</b> {@link #register} creates a memory region with local write, remote read and
 * remote write; its token context carries the device, GID, LID, port, address, rkey and size, and
 * its lkey serves ops on memory inside it. {@link #prepareLocal} creates a local-write-only region
 * for other caller memory. {@link #release} deregisters: a peer's later access fails with a remote
 * access error from the device.
 *
 * <p><b>Queue pairs.</b> {@code rdma.ibverbs.qpsPerPeer} RC queue pairs per (local device, peer
 * manager endpoint, peer device), each created on first use ({@link VerbsPeers}). An op of at
 * least two minimum stripes is striped across them ({@link Stripes}); smaller ops take turns.
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

    private static final int QP_ACCESS = VerbsPeers.QP_ACCESS;
    private static final System.Logger LOG = System.getLogger(VerbsTransport.class.getName());

    private final TransportContext context;
    private final VerbsDevice device;
    private final PeerAffinity affinity;
    private final Duration qpInitTimeout;
    private final VerbsTuning tuning;
    private final VerbsPeers peers;
    private final Map<Long, MemoryRegion> registrations = new ConcurrentHashMap<>();
    private volatile boolean closed;

    private VerbsTransport(TransportContext context, VerbsDevice device, VerbsTuning tuning) {
        this.context = context;
        this.device = device;
        this.affinity = context.settings().get(IbverbsSettings.PEER_AFFINITY);
        this.qpInitTimeout = context.settings().get(IbverbsSettings.QP_INIT_TIMEOUT);
        this.tuning = tuning.clampTo(device.name, device.attributes, device.cq.entries(),
                note -> LOG.log(System.Logger.Level.INFO, note));
        this.peers = new VerbsPeers(context, this.tuning, qpInitTimeout);
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

    /**
     * Checks one op, then (once its token is checked and the queue pairs of its stripes are
     * connected) queues its chunks: the op is split into stripes ({@link Stripes}) over the queue
     * pairs to the owner's device, and each stripe at the port's maximum message size.
     */
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
        Endpoint owner = op.remote().owner();
        int stripes = Stripes.count(length, tuning.qpsPerPeer(), tuning.minStripeBytes());
        int first = peers.firstSlot(device, owner, r.device, stripes);
        @SuppressWarnings("unchecked")
        CompletableFuture<VerbsConnection>[] lanes = new CompletableFuture[stripes];
        for (int i = 0; i < stripes; i++) {
            lanes[i] = peers.connection(device, owner, r.device, first + i);
        }
        CompletableFuture<Void> checked = checked(op.remote(), r);
        return CompletableFuture.allOf(CompletableFuture.allOf(lanes), checked).handle((ok, t) -> {
            if (t != null) {
                s.fail(index, VerbsPeers.failure(t));
                return null;
            }
            List<List<VerbsConnection.Chunk>> perLane = new ArrayList<>(stripes);
            int total = 0;
            for (int i = 0; i < stripes; i++) {
                s.uses(lanes[i].join());
                List<VerbsConnection.Chunk> chunks = chunks(s, index, op, local, r, Stripes.start(length, stripes, i),
                        Stripes.end(length, stripes, i));
                perLane.add(chunks);
                total += chunks.size();
            }
            if (s.expect(total)) {
                for (int i = 0; i < stripes; i++) {
                    lanes[i].join().enqueue(perLane.get(i));
                }
            }
            return null;
        });
    }

    /** The work requests of bytes {@code [from, to)} of {@code op}: one per maximum message size. */
    private List<VerbsConnection.Chunk> chunks(VerbsSubmission s, int index, TransportOp op, VerbsLocal local,
                                               VerbsWire.RemoteRegion r, long from, long to) {
        int opcode = op.type() == TransportOp.OpType.READ_INTO_LOCAL ? Ibv.IBV_WR_RDMA_READ : Ibv.IBV_WR_RDMA_WRITE;
        long max = device.maxMessageBytes();
        List<VerbsConnection.Chunk> chunks = new ArrayList<>((int) ((to - from + max - 1) / max));
        for (long at = from; at < to; at += max) {
            int n = (int) Math.min(max, to - at);
            chunks.add(new VerbsConnection.Chunk(s, index, opcode, op.local().address() + at, n, local.region().lkey(),
                    r.address + op.remoteOffset() + at, r.rkey));
        }
        return chunks;
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

    // ------------------------------------------------------------------ the control channel

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
        return peers.accept(device, remote);
    }

    /** Connected queue pairs this side created to other managers' devices, not broken (for tests). */
    int liveQueuePairs() {
        return peers.liveQueuePairs();
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
        peers.close();
        registrations.clear();
        device.close();
    }

    @Override
    public String toString() {
        return "ibverbs on " + device + " (" + Arrays.asList(registrations.size() + " registrations",
                peers.toString()) + ")";
    }
}
