package io.rdma4j.bench.ring;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * What {@code register()} costs its caller, and how many registrations per second get done, for
 * the real {@link RdmaManager} (registrations queued on a Disruptor ring and run by one consumer
 * thread) against a baseline {@link SynchronizedManager} (the same work on the caller's thread
 * under one lock). Both register a 4 KiB native segment with the in-memory
 * {@link BenchTransportProvider} transport, so no network is involved; every registration is
 * released again, so the tables stay small. {@code registrationCostMicros} adds CPU work to each
 * registration, standing for a native one: it shows what the ring is for (the caller does not pay it).
 *
 * <ul>
 *   <li>{@code registerCallerLatency} (SampleTime, ns): time until {@code register()} returns,
 *       with one caller ({@code ...TwoCallers}: two). Between calls, outside the measurement,
 *       the caller waits for the registration and submits its release.</li>
 *   <li>{@code registerAndJoin} (ops/s): register, wait for the token, release; one at a time.</li>
 *   <li>{@code registerBatchAndJoinAll} (ops/s, one op per registration): {@value #BATCH}
 *       registrations in flight, then wait for all, then release all.</li>
 * </ul>
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests install}):
 * <pre>
 * mkdir -p benchmarks/target/jmh
 * java -jar benchmarks/target/benchmarks.jar RegistrationRingBenchmark -rf json -rff benchmarks/target/jmh/registration-ring.json
 * </pre>
 * Assumed hardware: any x86-64 or aarch64 machine; written for 2 cores, where the ring's consumer
 * thread and the two-caller variant compete for CPUs (pin with {@code taskset -c $ISOLATED_CPUS}
 * for steadier numbers). JVM flags come from {@code @Fork}.
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
public class RegistrationRingBenchmark {

    /** Registrations in flight in {@link #registerBatchAndJoinAll}; well under the ring's 1024 slots. */
    public static final int BATCH = 64;

    /** {@code ring}: the real RdmaManager; {@code synchronized}: the lock-based baseline. */
    @Param({"ring", "synchronized"})
    public String manager;

    /**
     * CPU each registration costs the transport, in microseconds: 0 measures the manager's own
     * overhead; 20 stands for a native registration ({@code ibv_reg_mr} of a small buffer), where
     * the ring keeps that cost off the caller's thread.
     */
    @Param({"0", "20"})
    public long registrationCostMicros;

    private Registrar registrar;
    private Arena arena;
    private MemorySegment segment;

    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        segment = arena.allocate(4096, 4096);
        BenchTransportProvider provider = new BenchTransportProvider(TimeUnit.MICROSECONDS.toNanos(registrationCostMicros));
        registrar = switch (manager) {
            case "ring" -> new RingRegistrar(RdmaManager.newBuilder().isolated()
                    .providers(List.of(provider)).build());
            case "synchronized" -> new LockRegistrar(new SynchronizedManager(provider.openStandalone()));
            default -> throw new IllegalArgumentException("unknown manager " + manager);
        };
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        registrar.close();
        arena.close();
    }

    /** One caller's registration in flight between invocations of the latency benchmarks. */
    @State(Scope.Thread)
    public static class Pending {
        private Registrar registrar;
        CompletableFuture<?> future;

        @Setup(Level.Trial)
        public void setUp(RegistrationRingBenchmark benchmark) {
            registrar = benchmark.registrar;
        }

        /** Outside the measurement: wait for the registration and submit its release. */
        @TearDown(Level.Invocation)
        public void settle() {
            if (future != null) {
                registrar.release(future.join());
                future = null;
            }
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    public CompletableFuture<?> registerCallerLatency(Pending pending) {
        return pending.future = registrar.register(segment);
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Threads(2)
    public CompletableFuture<?> registerCallerLatencyTwoCallers(Pending pending) {
        return pending.future = registrar.register(segment);
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    public Object registerAndJoin() {
        Object token = registrar.register(segment).join();
        registrar.release(token);
        return token;
    }

    @Benchmark
    @BenchmarkMode(Mode.Throughput)
    @OutputTimeUnit(TimeUnit.SECONDS)
    @OperationsPerInvocation(BATCH)
    public void registerBatchAndJoinAll(Blackhole bh) {
        CompletableFuture<?>[] futures = new CompletableFuture<?>[BATCH];
        for (int i = 0; i < BATCH; i++) {
            futures[i] = registrar.register(segment);
        }
        Object[] tokens = new Object[BATCH];
        for (int i = 0; i < BATCH; i++) {
            tokens[i] = futures[i].join();
        }
        for (int i = 0; i < BATCH; i++) {
            registrar.release(tokens[i]);
            bh.consume(tokens[i]);
        }
    }

    /** The two subjects behind one face; each trial loads one implementation, so calls stay monomorphic. */
    private interface Registrar {
        CompletableFuture<?> register(MemorySegment segment);

        /** Submits the release of a registration's token; does not wait for it. */
        void release(Object token);

        void close();
    }

    private static final class RingRegistrar implements Registrar {
        private final RdmaManager manager;

        RingRegistrar(RdmaManager manager) {
            this.manager = manager;
        }

        @Override
        public CompletableFuture<?> register(MemorySegment segment) {
            return manager.register(segment);
        }

        @Override
        public void release(Object token) {
            // Queued behind on the same ring, so the next registration's join also waits for it.
            manager.release(((RdmaRemoteBuffer) token).id());
        }

        @Override
        public void close() {
            manager.close();
        }
    }

    private static final class LockRegistrar implements Registrar {
        private final SynchronizedManager manager;

        LockRegistrar(SynchronizedManager manager) {
            this.manager = manager;
        }

        @Override
        public CompletableFuture<?> register(MemorySegment segment) {
            return manager.register(segment);
        }

        @Override
        public void release(Object token) {
            manager.release(((SynchronizedManager.Token) token).id());
        }

        @Override
        public void close() {
            manager.close();
        }
    }
}
