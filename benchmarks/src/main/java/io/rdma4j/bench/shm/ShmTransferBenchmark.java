package io.rdma4j.bench.shm;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaManager;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

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
 * Reads and writes of a buffer owned by a second JVM on this host, through rdma4j, next to
 * {@link MemorySegment#copy} of the same size in one process, the ceiling.
 *
 * <ul>
 *   <li>{@code transport=shm, memory=allocate}: the owner's {@code RdmaManager.allocate} backs the
 *       buffer with a memory file the holder maps: plain copies.</li>
 *   <li>{@code transport=shm, memory=register}: a caller-owned segment the owner registered:
 *       cross-memory attach ({@code process_vm_readv/writev}).</li>
 *   <li>{@code transport=tcp}: loopback TCP, for comparison ({@code memory} does not matter).</li>
 *   <li>{@code segmentCopy}: {@link MemorySegment#copy} between two local segments.</li>
 * </ul>
 * Ops go through {@code submitAndWait} (on the benchmark thread) and through {@code submit}
 * (a transport thread, the caller waits on the future). Sample time: the report gives p50 and
 * the mean; bandwidth is {@code size / mean}.
 *
 * <p>Run (after {@code mvn -B -q -DskipTests package -pl benchmarks -am}):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar ShmTransferBenchmark -rf json -rff benchmarks/target/jmh/shm-transfer.json
 * </pre>
 * Assumed hardware: one machine; 64 MiB needs about 300 MiB of native memory over both JVMs.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@State(Scope.Benchmark)
public class ShmTransferBenchmark {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Bytes per op. */
    @Param({"8", "4096", "1048576", "67108864"})
    public long size;

    /** The transport both managers run. */
    @Param({"shm", "tcp"})
    public String transport;

    /** How the owner provides the buffer: {@code allocate} or {@code register}. */
    @Param({"allocate", "register"})
    public String memory;

    private TransferOwner owner;
    private RdmaManager holder;
    private Arena arena;
    private MemorySegment local;
    private MemorySegment other;
    private RdmaAction read;
    private RdmaAction write;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        owner = TransferOwner.start(transport, memory, size);
        holder = TransferOwner.manager(transport);
        arena = Arena.ofShared();
        local = arena.allocate(size, 4096).fill((byte) 0x5a);
        other = arena.allocate(size, 4096).fill((byte) 0x11);
        read = holder.newAction().readInto(owner.token(), local);
        write = holder.newAction().writeFrom(owner.token(), local);
        read.submitAndWait(TIMEOUT);       // attach and map before measuring
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        holder.close();
        owner.close();
        arena.close();
    }

    @Benchmark
    public void read() {
        read.submitAndWait(TIMEOUT);
    }

    @Benchmark
    public void write() {
        write.submitAndWait(TIMEOUT);
    }

    @Benchmark
    public void readAsync() {
        read.submit(TIMEOUT).join();
    }

    @Benchmark
    public MemorySegment segmentCopy() {
        MemorySegment.copy(local, 0, other, 0, size);
        return other;
    }
}
