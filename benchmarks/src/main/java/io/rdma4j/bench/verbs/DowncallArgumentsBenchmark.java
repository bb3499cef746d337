package io.rdma4j.bench.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * What a downcall's pointer arguments cost, as in {@code ibv_post_send(qp, wr, &bad_wr)}: the
 * same C function ({@code memcmp(a, b, 0)}, which returns at once) called through a function
 * pointer with two pointers into a shared arena passed as {@code MemorySegment}s (each is checked
 * and its arena's session acquired and released around the call) or as their addresses in
 * {@code long}s (nothing to check; the caller keeps the memory alive).
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests package}), under C2 and under
 * C1, which the soft-RoCE VM runs:
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar DowncallArgumentsBenchmark
 * java -jar benchmarks/target/benchmarks.jar DowncallArgumentsBenchmark -jvmArgsAppend -XX:TieredStopAtLevel=1
 * </pre>
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class DowncallArgumentsBenchmark {

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle SEGMENTS = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG));
    private static final MethodHandle ADDRESSES = LINKER.downcallHandle(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle ADDRESSES_CRITICAL = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), Linker.Option.critical(false));

    private Arena arena;
    private MemorySegment function;
    private MemorySegment a;
    private MemorySegment b;

    @Setup
    public void setUp() {
        arena = Arena.ofShared();
        function = LINKER.defaultLookup().find("memcmp").orElseThrow();
        a = arena.allocate(64);
        b = arena.allocate(8);
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public int segments() throws Throwable {
        return (int) SEGMENTS.invokeExact(function, a, b, 0L);
    }

    @Benchmark
    public int addresses() throws Throwable {
        return (int) ADDRESSES.invokeExact(function, a.address(), b.address(), 0L);
    }

    @Benchmark
    public int addressesCritical() throws Throwable {
        return (int) ADDRESSES_CRITICAL.invokeExact(function, a.address(), b.address(), 0L);
    }
}
