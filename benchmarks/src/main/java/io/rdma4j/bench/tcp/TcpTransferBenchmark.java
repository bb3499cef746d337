package io.rdma4j.bench.tcp;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.TransportProvider;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Bulk and small transfers between two {@link RdmaManager}s in this JVM over loopback, next to
 * what the same bytes cost without rdma4j: a plain {@link SocketChannel} copy and a plain memcpy.
 *
 * <ul>
 *   <li>{@code rdmaWrite64MiB}, {@code rdmaRead64MiB} (ops/s; the {@code bytes} counter is
 *       bytes/s): one 64 MiB write or read of a remote buffer, for {@code parallelism} 1, 2 and 4
 *       ({@code rdma.tcp.parallelism} on both managers) with {@code chunkMiB} 16
 *       ({@code rdma.tcp.maxChunkMiB}), so a transfer is 4 chunks that 4 connections can share;
 *       {@code -p chunkMiB=64} gives the transport's default, one chunk per transfer.</li>
 *   <li>{@code rdmaRead8BLatency} (SampleTime, us): an 8-byte read, one round trip, through the
 *       asynchronous {@code submit} (the caller waits on the future).</li>
 *   <li>{@code rdmaRead8BLatencyOnCallerThread}: the same through {@code submitAndWait}, which does
 *       the I/O on the calling thread (no hand-off to a transport thread and back).</li>
 *   <li>{@code socketWrite64MiB}, {@code socketRead64MiB}: the baseline; one connection, direct
 *       buffers, a server thread that consumes 64 MiB and answers a 1-byte ack (write) or sends
 *       64 MiB on a 1-byte request (read); writes hand the kernel at most 1 MiB per call.</li>
 *   <li>{@code socketPingPong8BLatency}: the baseline round trip, 8 bytes each way.</li>
 *   <li>{@code memcpy64MiB}: {@link MemorySegment#copy} of 64 MiB, the ceiling.</li>
 * </ul>
 *
 * <p>{@code transport} picks the provider by name through {@link ServiceLoader}; a transport that
 * is not available here fails its trials' setup with the reason and JMH moves on (on a verbs
 * host, {@code -p transport=ibverbs} measures verbs).
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests install}):
 * <pre>
 * mkdir -p benchmarks/target/jmh
 * java -jar benchmarks/target/benchmarks.jar TcpTransferBenchmark -rf json -rff benchmarks/target/jmh/tcp-transfer.json
 * </pre>
 * Assumed hardware: one machine, loopback only; 64 MiB needs about 400 MiB of native memory. On
 * 2 cores the transport's threads and the benchmark thread share CPUs; pin with
 * {@code taskset -c $ISOLATED_CPUS} for steadier numbers.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
public class TcpTransferBenchmark {

    /** Size of a bulk transfer. */
    public static final int BULK = 64 << 20;
    /** Size of a small transfer. */
    public static final int SMALL = 8;

    /**
     * Most bytes the plain socket copy hands one {@code write} call: 64 MiB in one call moved
     * 2.6 GB/s, 1 MiB calls 3 to 3.3 GB/s on the reference machine, so the baseline is the better one.
     */
    static final int SLICE = 1 << 20;

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Bytes moved, reported by JMH as a rate (bytes per second) next to ops/s. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    /** Which transport the rdma benchmarks use. */
    @State(Scope.Benchmark)
    public static class Transport {
        @Param({"tcp"})
        public String transport;

        /**
         * A manager running only this transport. Positive {@code parallelism} and {@code chunkMiB}
         * set {@code rdma.tcp.parallelism} and {@code rdma.tcp.maxChunkMiB}; other transports
         * ignore them.
         */
        RdmaManager open(int parallelism, int chunkMiB) {
            TransportProvider provider = ServiceLoader.load(TransportProvider.class).stream()
                    .map(ServiceLoader.Provider::get)
                    .filter(p -> p.name().equals(transport))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no transport named " + transport
                            + " on the class path; skipping"));
            RdmaManagerBuilder builder = RdmaManager.newBuilder().isolated().providers(List.of(provider));
            if (transport.equals("tcp") && parallelism > 0) {
                builder.set("rdma.tcp.parallelism", Integer.toString(parallelism));
            }
            if (transport.equals("tcp") && chunkMiB > 0) {
                builder.set("rdma.tcp.maxChunkMiB", Integer.toString(chunkMiB));
            }
            try {
                return builder.build();
            } catch (RuntimeException e) {
                throw new IllegalStateException("transport " + transport + " cannot run here, skipping: " + e.getMessage(), e);
            }
        }
    }

    /** Two managers; the owner exposes a 64 MiB buffer, the user holds 64 MiB of local memory. */
    @State(Scope.Benchmark)
    public static class BulkPair {
        @Param({"1", "2", "4"})
        public int parallelism;

        /** Chunk size: 16 MiB splits a 64 MiB transfer into 4 chunks that parallelism 4 can spread. */
        @Param({"16"})
        public int chunkMiB;

        private RdmaManager owner;
        private RdmaManager user;
        private RdmaBuffer remote;
        private Arena arena;
        RdmaAction write;
        RdmaAction read;

        @Setup(Level.Trial)
        public void setUp(Transport transport) {
            owner = transport.open(parallelism, chunkMiB);
            user = transport.open(parallelism, chunkMiB);
            remote = owner.allocate(BULK).join();
            arena = Arena.ofShared();
            MemorySegment local = arena.allocate(BULK, 4096);
            local.fill((byte) 0x5a);
            RdmaRemoteBuffer token = RdmaRemoteBuffer.fromBytes(remote.remote().toBytes()); // as a peer gets it
            write = user.newAction().writeFrom(token, local);
            read = user.newAction().readInto(token, local);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            closeAll(user, owner);
            if (arena != null) {
                arena.close();
            }
        }
    }

    /** Two managers with default settings and an 8-byte remote buffer. */
    @State(Scope.Benchmark)
    public static class SmallPair {
        private RdmaManager owner;
        private RdmaManager user;
        private Arena arena;
        RdmaAction read;

        @Setup(Level.Trial)
        public void setUp(Transport transport) {
            owner = transport.open(0, 0);
            user = transport.open(0, 0);
            RdmaBuffer remote = owner.allocate(SMALL).join();
            arena = Arena.ofShared();
            read = user.newAction().readInto(RdmaRemoteBuffer.fromBytes(remote.remote().toBytes()),
                    arena.allocate(SMALL, 8));
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            closeAll(user, owner);
            if (arena != null) {
                arena.close();
            }
        }
    }

    /** A loopback connection to a server thread speaking a three-command protocol. */
    @State(Scope.Benchmark)
    public static class SocketPair {
        private static final byte WRITE = 'W';
        private static final byte READ = 'R';
        private static final byte PING = 'P';

        private ServerSocketChannel listener;
        private SocketChannel channel;
        private Thread server;
        private final ByteBuffer command = ByteBuffer.allocateDirect(1);
        private final ByteBuffer ack = ByteBuffer.allocateDirect(1);
        private final ByteBuffer bulk = ByteBuffer.allocateDirect(BULK);
        private final ByteBuffer small = ByteBuffer.allocateDirect(SMALL);

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            server = Thread.ofPlatform().daemon().name("socket-baseline-server").start(this::serve);
            channel = SocketChannel.open(listener.getLocalAddress());
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            channel.close(); // the server sees EOF and stops
            server.join(10_000);
            listener.close();
        }

        private void serve() {
            ByteBuffer cmd = ByteBuffer.allocateDirect(1);
            ByteBuffer data = ByteBuffer.allocateDirect(BULK);
            ByteBuffer echo = ByteBuffer.allocateDirect(SMALL);
            ByteBuffer reply = ByteBuffer.allocateDirect(1);
            try (SocketChannel peer = listener.accept()) {
                peer.setOption(StandardSocketOptions.TCP_NODELAY, true);
                while (true) {
                    cmd.clear();
                    if (!readFully(peer, cmd, true)) {
                        return;
                    }
                    switch (cmd.get(0)) {
                        case WRITE -> {
                            data.clear();
                            readFully(peer, data, false);
                            reply.clear();
                            writeFully(peer, reply);
                        }
                        case READ -> {
                            data.clear();
                            writeFully(peer, data);
                        }
                        case PING -> {
                            echo.clear();
                            readFully(peer, echo, false);
                            echo.flip();
                            writeFully(peer, echo);
                        }
                        default -> throw new IllegalStateException("unknown command " + cmd.get(0));
                    }
                }
            } catch (IOException e) {
                // the benchmark closed the connection
            }
        }

        void write64MiB() throws IOException {
            command.clear().put(WRITE).flip();
            bulk.clear();
            writeFully(channel, command, bulk);
            ack.clear();
            readFully(channel, ack, false);
        }

        void read64MiB() throws IOException {
            command.clear().put(READ).flip();
            writeFully(channel, command);
            bulk.clear();
            readFully(channel, bulk, false);
        }

        void pingPong() throws IOException {
            command.clear().put(PING).flip();
            small.clear();
            writeFully(channel, command, small);
            small.clear();
            readFully(channel, small, false);
        }
    }

    /** Two 64 MiB native segments. */
    @State(Scope.Benchmark)
    public static class Memory {
        private Arena arena;
        MemorySegment source;
        MemorySegment target;

        @Setup(Level.Trial)
        public void setUp() {
            arena = Arena.ofShared();
            source = arena.allocate(BULK, 4096).fill((byte) 0x5a);
            target = arena.allocate(BULK, 4096);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            arena.close();
        }
    }

    // ------------------------------------------------------------------ rdma4j

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void rdmaWrite64MiB(BulkPair pair, Bytes bytes) {
        pair.write.submit(TIMEOUT).join();
        bytes.bytes += BULK;
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void rdmaRead64MiB(BulkPair pair, Bytes bytes) {
        pair.read.submit(TIMEOUT).join();
        bytes.bytes += BULK;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void rdmaRead8BLatency(SmallPair pair) {
        pair.read.submit(TIMEOUT).join();
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void rdmaRead8BLatencyOnCallerThread(SmallPair pair) {
        pair.read.submitAndWait(TIMEOUT);
    }

    // ------------------------------------------------------------------ baselines

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void socketWrite64MiB(SocketPair socket, Bytes bytes) throws IOException {
        socket.write64MiB();
        bytes.bytes += BULK;
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void socketRead64MiB(SocketPair socket, Bytes bytes) throws IOException {
        socket.read64MiB();
        bytes.bytes += BULK;
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void socketPingPong8BLatency(SocketPair socket) throws IOException {
        socket.pingPong();
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public void memcpy64MiB(Memory memory, Bytes bytes) {
        MemorySegment.copy(memory.source, 0, memory.target, 0, BULK);
        bytes.bytes += BULK;
    }

    // ------------------------------------------------------------------ helpers

    private static void closeAll(RdmaManager... managers) {
        for (RdmaManager m : managers) {
            if (m != null) {
                m.close();
            }
        }
    }

    /** Reads until {@code buffer} is full; returns false on EOF before the first byte when {@code eofOk}. */
    private static boolean readFully(SocketChannel channel, ByteBuffer buffer, boolean eofOk) throws IOException {
        boolean first = true;
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                if (first && eofOk) {
                    return false;
                }
                throw new EOFException("connection closed mid-message");
            }
            first = false;
        }
        return true;
    }

    /** Writes every buffer, at most {@link #SLICE} bytes of the last one per system call. */
    private static void writeFully(SocketChannel channel, ByteBuffer... buffers) throws IOException {
        ByteBuffer last = buffers[buffers.length - 1];
        int limit = last.limit();
        long remaining = 0;
        for (ByteBuffer b : buffers) {
            remaining += b.remaining();
        }
        while (remaining > 0) {
            last.limit(last.position() + Math.min(SLICE, limit - last.position()));
            remaining -= channel.write(buffers);
        }
        last.limit(limit);
    }
}
