package io.rdma4j.bench.shm;

import io.rdma4j.transport.shm.ffi.ProcessVmCopier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
 * The same-host mechanisms before any transport logic: cross-memory attach
 * ({@code process_vm_readv} / {@code process_vm_writev} through {@link ProcessVmCopier}, the
 * shm transport's binding) next to {@link MemorySegment#copy} of the same size, the ceiling.
 *
 * <ul>
 *   <li>{@code processVmReadv}: copy {@code size} bytes from the peer's segment into a local one.</li>
 *   <li>{@code processVmWritev}: copy a local segment into the peer's.</li>
 *   <li>{@code processVmReadv2Threads}: the same read split in two halves, one on a helper thread
 *       with its own copier: does a second core add bandwidth?</li>
 *   <li>{@code segmentCopy}: {@link MemorySegment#copy} between two local segments (peer ignored).</li>
 * </ul>
 * {@code peer=jvm} starts a second JVM ({@link PeerMemory}) that holds the remote segment and does
 * nothing else; {@code peer=self} uses a segment of this JVM through its own pid (same kernel
 * path, no second process). Every segment is filled first, so no page fault is measured.
 * Average time per op; bandwidth is {@code size / time}.
 *
 * <p>Run (from the repository root, after {@code mvn -B -q -DskipTests package -pl benchmarks -am}):
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar CrossMemoryCopyBenchmark -rf json -rff benchmarks/target/jmh/shm-mechanisms.json
 * </pre>
 * Assumed hardware: one machine; {@code size=67108864} needs about 200 MiB of native memory.
 */
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
public class CrossMemoryCopyBenchmark {

    /** Bytes per op. */
    @Param({"8", "4096", "1048576", "67108864"})
    public long size;

    /** Whose memory is remote: {@code jvm} (a second process) or {@code self}. */
    @Param({"jvm", "self"})
    public String peer;

    private Arena arena;
    private MemorySegment local;
    private MemorySegment other;
    private MemorySegment selfRemote;
    private PeerMemory peerJvm;
    private ProcessVmCopier copier;
    private long pid;
    private long remoteAddress;
    private ExecutorService helper;
    private ProcessVmCopier helperCopier;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        arena = Arena.ofShared();
        local = arena.allocate(size, 4096).fill((byte) 0x5a);
        other = arena.allocate(size, 4096).fill((byte) 0x11);
        copier = new ProcessVmCopier();
        switch (peer) {
            case "jvm" -> {
                peerJvm = PeerMemory.start(size);
                pid = peerJvm.pid();
                remoteAddress = peerJvm.address();
            }
            case "self" -> {
                selfRemote = arena.allocate(size, 4096).fill((byte) 0x3c);
                pid = ProcessHandle.current().pid();
                remoteAddress = selfRemote.address();
            }
            default -> throw new IllegalArgumentException("peer must be jvm or self: " + peer);
        }
        check(copier.read(pid, local, 0, remoteAddress, size));
        helper = Executors.newSingleThreadExecutor();
        helperCopier = new ProcessVmCopier();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        helper.close();
        helperCopier.close();
        copier.close();
        if (peerJvm != null) {
            peerJvm.close();
        }
        arena.close();
    }

    @Benchmark
    public int processVmReadv() {
        return check(copier.read(pid, local, 0, remoteAddress, size));
    }

    @Benchmark
    public int processVmWritev() {
        return check(copier.write(pid, local, 0, remoteAddress, size));
    }

    @Benchmark
    public int processVmReadv2Threads() throws Exception {
        long half = size / 2;
        Future<Integer> other = helper.submit(() -> check(helperCopier.read(pid, local, half, remoteAddress + half,
                size - half)));
        check(copier.read(pid, local, 0, remoteAddress, half));
        return other.get();
    }

    @Benchmark
    public MemorySegment segmentCopy() {
        MemorySegment.copy(local, 0, other, 0, size);
        return other;
    }

    private static int check(int errno) {
        if (errno != 0) {
            throw new IllegalStateException("cross-memory attach failed: " + io.rdma4j.unix.Errno.describe(errno));
        }
        return errno;
    }
}
