package io.rdma4j.bench.dispatch;

import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.spi.Deadline;
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

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * What bounding one op in time costs: {@link WatchdogThread#arm} and {@code disarm} of a guard that
 * never fires, as the dispatcher and the transports do around each op (TCP per connection, verbs
 * per submission). {@code deadlineOnly} is the floor: building the deadline alone.
 *
 * <p>Run (from the repository root, after {@code mvn -q -DskipTests package}):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar WatchdogBenchmark
 * </pre>
 */
@State(Scope.Benchmark)
@Fork(value = 1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class WatchdogBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Runnable NOTHING = () -> { };

    private WatchdogThread watchdog;

    @Setup
    public void setUp() {
        watchdog = new WatchdogThread("bench-watchdog");
    }

    @TearDown
    public void tearDown() {
        watchdog.close();
    }

    @Benchmark
    public boolean armAndDisarm() {
        return watchdog.arm(Deadline.after(TIMEOUT), NOTHING).disarm();
    }

    @Benchmark
    public Deadline deadlineOnly() {
        return Deadline.after(TIMEOUT);
    }
}
