package io.rdma4j.bench.verbs;

import io.rdma4j.transport.ibverbs.ffi.CompletionQueue;
import io.rdma4j.transport.ibverbs.ffi.DeviceAttributes;
import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.MemoryRegion;
import io.rdma4j.transport.ibverbs.ffi.PortAttributes;
import io.rdma4j.transport.ibverbs.ffi.ProtectionDomain;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;
import io.rdma4j.transport.ibverbs.ffi.QueuePairInit;
import io.rdma4j.transport.ibverbs.ffi.ReadyToReceive;
import io.rdma4j.transport.ibverbs.ffi.ReadyToSend;
import io.rdma4j.transport.ibverbs.ffi.SendWorkRequests;
import io.rdma4j.transport.ibverbs.ffi.VerbsContext;
import io.rdma4j.transport.ibverbs.ffi.WorkCompletions;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

/**
 * The floor under {@code rdma-perf}'s 8-byte read latency: what one JVM pays for an RDMA READ
 * through rdma4j's FFM bindings alone, with no transport, manager or future above them. It
 * connects a queue pair on one device to a queue pair on another (or the same) device in this
 * process, then, one read at a time, fills the work request, posts it and spins on the
 * completion queue on the calling thread, as {@code ib_read_lat} does in C. The median of that
 * loop, next to {@code ib_read_lat}'s and {@code rdma-perf}'s, splits the distance between the two
 * into what Java and the FFM downcalls cost on this machine and what rdma4j adds.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp benchmarks/target/benchmarks.jar \
 *     io.rdma4j.bench.verbs.ReadLatencyFloor LOCAL_DEVICE REMOTE_DEVICE [WARMUP_READS [MEASURED_READS]]
 * </pre>
 *
 * <p>Prints one line, {@code read 8 B p50_us=... p99_us=... reads=...}, and exits 0; exits 1 with
 * the reason when a device is missing or a read fails (the completion's status text), and 2 on
 * bad arguments. Each port's first IPv4-mapped GID is used (RoCE v2 over IPv4), else GID 0.
 * Used by {@code bin/rdma-perf-softroce}; not part of the library.
 */
public final class ReadLatencyFloor {

    private static final int PORT = 1;
    private static final int SIZE = 8;
    private static final int ACCESS = Ibv.IBV_ACCESS_LOCAL_WRITE | Ibv.IBV_ACCESS_REMOTE_READ | Ibv.IBV_ACCESS_REMOTE_WRITE;
    /** How long one read may take before the run fails rather than spins for ever. */
    private static final long READ_DEADLINE_NANOS = 10_000_000_000L;

    private ReadLatencyFloor() {
    }

    public static void main(String[] args) {
        if (args.length < 2 || args.length > 4) {
            System.err.println("usage: ReadLatencyFloor LOCAL_DEVICE REMOTE_DEVICE [WARMUP_READS [MEASURED_READS]]");
            System.exit(2);
        }
        int warmup;
        int measured;
        try {
            warmup = args.length > 2 ? Integer.parseInt(args[2]) : 50_000;
            measured = args.length > 3 ? Integer.parseInt(args[3]) : 20_000;
        } catch (NumberFormatException e) {
            System.err.println("ReadLatencyFloor: read counts must be whole numbers: " + e.getMessage());
            System.exit(2);
            return;
        }
        if (warmup < 0 || measured < 1) {
            System.err.println("ReadLatencyFloor: need WARMUP_READS >= 0 and MEASURED_READS >= 1, got " + warmup + " and " + measured);
            System.exit(2);
        }
        try {
            long[] nanos = run(args[0], args[1], warmup, measured);
            Arrays.sort(nanos);
            System.out.printf(Locale.ROOT, "read %d B p50_us=%.2f p99_us=%.2f reads=%d%n", SIZE,
                    nanos[nanos.length / 2] / 1e3, nanos[(int) (nanos.length * 0.99)] / 1e3, nanos.length);
        } catch (RuntimeException e) {
            System.err.println("ReadLatencyFloor: " + e.getMessage());
            System.exit(1);
        }
    }

    /**
     * Connects {@code localDevice} to {@code remoteDevice} and times {@code measured} 8-byte reads
     * after {@code warmup} untimed ones; checks that the last read brought the remote bytes.
     *
     * @return each measured read's time in nanoseconds, in order
     * @throws IllegalStateException when a read fails or does not complete within 10 s, or the data differs
     * @throws io.rdma4j.transport.ibverbs.ffi.IbverbsException when a device cannot be opened or set up
     */
    static long[] run(String localDevice, String remoteDevice, int warmup, int measured) {
        try (Side local = new Side(localDevice); Side remote = new Side(remoteDevice); Arena arena = Arena.ofConfined();
             SendWorkRequests request = SendWorkRequests.allocate(1, 1); WorkCompletions completions = WorkCompletions.allocate(1)) {
            local.connectTo(remote, 0x1000, 0x2000);
            remote.connectTo(local, 0x2000, 0x1000);
            MemorySegment source = arena.allocate(SIZE).fill((byte) 0x5a);
            try (MemoryRegion into = local.pd.register(arena.allocate(SIZE), ACCESS);
                 MemoryRegion from = remote.pd.register(source, ACCESS)) {
                long[] nanos = new long[measured];
                for (int i = 0; i < warmup + measured; i++) {
                    long start = System.nanoTime();
                    request.setRdma(0, i, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, into, 0, SIZE, from.address(), from.rkey());
                    local.qp.postSend(request, 1);
                    awaitOne(local.cq, completions, start);
                    if (i >= warmup) {
                        nanos[i - warmup] = System.nanoTime() - start;
                    }
                }
                if (into.segment().mismatch(source) != -1) {
                    throw new IllegalStateException("the last read did not bring the remote bytes");
                }
                return nanos;
            }
        }
    }

    private static void awaitOne(CompletionQueue cq, WorkCompletions completions, long start) {
        while (cq.poll(completions) == 0) {
            if (System.nanoTime() - start > READ_DEADLINE_NANOS) {
                throw new IllegalStateException("a read did not complete within 10 s");
            }
        }
        if (completions.status(0) != Ibv.IBV_WC_SUCCESS) {
            throw new IllegalStateException("read failed: " + WorkCompletions.statusText(completions.status(0)));
        }
    }

    /** One end: device context, protection domain, completion queue and queue pair; closing the context frees them all. */
    private static final class Side implements AutoCloseable {
        final VerbsContext context;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final DeviceAttributes device;
        final PortAttributes port;
        final int gidIndex;
        final Gid gid;

        Side(String deviceName) {
            context = VerbsContext.open(deviceName);
            try {
                device = context.queryDevice();
                port = context.queryPort(PORT);
                if (!port.isActive()) {
                    throw new IllegalStateException("port " + PORT + " of " + deviceName + " is not active");
                }
                gidIndex = ipv4MappedGid(context, port);
                gid = context.queryGid(PORT, gidIndex);
                pd = context.allocateProtectionDomain();
                cq = context.createCompletionQueue(4, null);
                qp = pd.createReliableConnectedQueuePair(new QueuePairInit(cq, cq, 4, 4, 1, 1));
            } catch (RuntimeException e) {
                context.close();
                throw e;
            }
        }

        /** RESET -> INIT -> RTR -> RTS, aimed at {@code peer}'s queue pair. */
        void connectTo(Side peer, int ownPsn, int peerPsn) {
            int mtu = Math.min(port.activeMtu(), peer.port.activeMtu());
            qp.modifyToInit(PORT, 0, ACCESS);
            qp.modifyToReadyToReceive(new ReadyToReceive(mtu, peer.qp.number(), peerPsn,
                    Math.min(16, device.maxQpRdAtom()), 12, PORT, peer.port.lid(), peer.gid, gidIndex, 64));
            qp.modifyToReadyToSend(new ReadyToSend(ownPsn, 14, 7, 7, Math.min(16, device.maxQpInitRdAtom())));
        }

        private static int ipv4MappedGid(VerbsContext context, PortAttributes port) {
            for (int i = 0; i < port.gidTableLength(); i++) {
                if (context.queryGid(PORT, i).isIpv4Mapped()) {
                    return i;
                }
            }
            return 0;
        }

        @Override
        public void close() {
            context.close();
        }
    }
}
