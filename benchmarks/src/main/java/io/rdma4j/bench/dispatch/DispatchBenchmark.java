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
 * What the manager itself costs per small op: an 8-byte read through {@link RdmaManager} whose
 * only transport is the in-memory {@link BenchTransportProvider} (a {@code MemorySegment.copy} on the
 * calling thread), so routing, token handling, deadline bookkeeping and the future are all that is
 * measured. {@code copy8B} is the floor: the same copy without the manager. With
 * {@code preparedLocal=true} the transport asks for prepared local memory, as verbs does, and each
 * op on the (unregistered) local segment goes through the manager's local-memory cache.
 *
 * <ul>
 *   <li>{@code read8BFuture}: {@code manager.read(remote, local, timeout).join()}.</li>
 *   <li>{@code read8BSubmitAndWait}: a prepared action's {@code submitAndWait(timeout)}.</li>
 *   <li>{@code read8BNewActionSubmitAndWait}: a new action per op, as most callers write it.</li>
 * </ul>
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests package}):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar DispatchBenchmark -rf json -rff benchmarks/target/jmh/dispatch.json
 * </pre>
 */
@State(Scope.Benchmark)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DispatchBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** Whether the transport asks for prepared local memory, as verbs does: ops then look it up in the manager's cache. */
    @Param({"false", "true"})
    public boolean preparedLocal;

    private Arena arena;
    private RdmaManager manager;
    private RdmaRemoteBuffer remote;
    private MemorySegment owned;
    private MemorySegment local;
    private RdmaAction action;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        manager = RdmaManager.newBuilder().providers(List.of(new BenchTransportProvider(preparedLocal))).build();
        owned = arena.allocate(8).fill((byte) 3);
        remote = manager.register(owned).join();
        local = arena.allocate(8);
        action = manager.newAction().readInto(remote, local);
    }

    @TearDown
    public void tearDown() {
        manager.close();
        arena.close();
    }

    @Benchmark
    public MemorySegment copy8B() {
        MemorySegment.copy(owned, 0, local, 0, 8);
        return local;
    }

    @Benchmark
    public Object read8BFuture() {
        return manager.read(remote, local, TIMEOUT).join();
    }

    @Benchmark
    public MemorySegment read8BSubmitAndWait() {
        action.submitAndWait(TIMEOUT);
        return local;
    }

    @Benchmark
    public MemorySegment read8BNewActionSubmitAndWait() {
        manager.newAction().readInto(remote, local).submitAndWait(TIMEOUT);
        return local;
    }
}
