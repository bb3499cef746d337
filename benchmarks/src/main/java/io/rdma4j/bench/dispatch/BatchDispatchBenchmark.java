package io.rdma4j.bench.dispatch;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.bench.ring.BenchTransportProvider;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * What the manager costs per op of a batch: one action of {@code ops} 8-byte reads, each from its
 * own slice of one registered buffer into its own slice of one local segment, through the
 * in-memory {@link BenchTransportProvider} (a {@code MemorySegment.copy} per op on the calling
 * thread), as {@link DispatchBenchmark} does for one op. Scores are per action: divide by
 * {@code ops} for the cost per op; {@code copyBatch} is the floor, the same copies without the
 * manager. With {@code -prof gc}, {@code gc.alloc.rate.norm} divided by {@code ops} is the
 * allocation per op. {@code -p preparedLocal=true}: as verbs, every op's local memory comes from
 * the manager's local-memory cache; {@code -jvmArgsAppend -XX:TieredStopAtLevel=1}: C1 only, as
 * the soft-RoCE VM's JVMs run (a cheap proxy for the Java an op costs there).
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests package}):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar BatchDispatchBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BatchDispatchBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** Ops per action. */
    @Param({"1", "16", "256", "1024"})
    public int ops;

    /**
     * Whether the transport asks for prepared local memory, as verbs does: the (unregistered) local
     * segment's memory then comes from the manager's local-memory cache ({@code -p preparedLocal=true}).
     */
    @Param({"false"})
    public boolean preparedLocal;

    private Arena arena;
    private RdmaManager manager;
    private MemorySegment owned;
    private MemorySegment local;
    private RdmaAction action;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        manager = RdmaManager.newBuilder().providers(List.of(new BenchTransportProvider(preparedLocal))).build();
        owned = arena.allocate(8L * ops).fill((byte) 3);
        RdmaRemoteBuffer remote = manager.register(owned).join();
        local = arena.allocate(8L * ops);
        action = manager.newAction();
        for (int i = 0; i < ops; i++) {
            action.readInto(remote.slice(8L * i, 8), local.asSlice(8L * i, 8));
        }
    }

    @TearDown
    public void tearDown() {
        manager.close();
        arena.close();
    }

    @Benchmark
    public MemorySegment copyBatch() {
        for (int i = 0; i < ops; i++) {
            MemorySegment.copy(owned, 8L * i, local, 8L * i, 8);
        }
        return local;
    }

    @Benchmark
    public MemorySegment batchSubmitAndWait() {
        action.submitAndWait(TIMEOUT);
        return local;
    }

    @Benchmark
    public Object batchSubmitJoin() {
        return action.submit(TIMEOUT).join();
    }
}
