package io.rdma4j.bench.verbs;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.SendWorkRequests;

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

/**
 * What filling the one work request of a post costs, as a connection does before every
 * {@code ibv_post_send}: {@code everyField} writes the entry and the request whole
 * ({@code setSge} and {@code setRdma}, ten native writes), {@code changedOnly} writes what changed
 * since the last fill ({@code setOne}; here the id alone, as in a loop of reads of one range).
 * Needs no RDMA device: it only writes native memory.
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests package}), under C2 and under
 * C1, which the soft-RoCE VM runs (C1 does not inline the {@code VarHandle} adapters of each write):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar WorkRequestFillBenchmark
 * java -jar benchmarks/target/benchmarks.jar WorkRequestFillBenchmark -jvmArgsAppend -XX:TieredStopAtLevel=1
 * </pre>
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WorkRequestFillBenchmark {

    private static final long LOCAL = 0x7f00_0000_1000L;
    private static final long REMOTE = 0x7f10_0000_2000L;

    private SendWorkRequests requests;
    private long id;

    @Setup
    public void setUp() {
        requests = SendWorkRequests.allocate(1, 1);
    }

    @TearDown
    public void tearDown() {
        requests.close();
    }

    @Benchmark
    public long everyField() {
        long wr = ++id;
        requests.setSge(0, 0, LOCAL, 8, 0x11);
        requests.setRdma(0, wr, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 1, REMOTE, 0x22);
        return wr;
    }

    @Benchmark
    public long changedOnly() {
        long wr = ++id;
        requests.setOne(wr, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, LOCAL, 8, 0x11, REMOTE, 0x22);
        return wr;
    }
}
