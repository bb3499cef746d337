package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * The peer JVM of {@link VerbsIdleManagerVmTest}: two managers (owner on rxe1, holder on rxe0)
 * over every transport on its class path, which must be ibverbs, shm and tcp. Greets with {@code READY <transports>}; on {@code measure
 * <window-ms> allocated|both} registers an allocated buffer (and, for {@code both}, the caller's
 * memory too: {@code register}), runs a burst of reads over each transport, then measures its
 * threads' CPU time (every thread {@link ThreadMXBean} lists) over a window of {@code window-ms}
 * milliseconds of nothing to do, and answers {@code IDLE used-ns=<n> measurer-ns=<n>
 * threads-over-1ms=<name ms, ...> window-ns=<n> tasks=<comm:cpu-us/times-scheduled, ...>}
 * (used-ns leaves out the measuring thread: see {@link #describe}).
 */
public final class IdleManagersMain {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /**
     * Both managers' liveness interval: half the default 30 s, so that the first rounds (which the
     * window waits for) come 15 s sooner; still longer than the window plus the wait for the later
     * side's first round, so that no round falls in the window, as with the default.
     */
    static final String PEER_CHECK_INTERVAL = "15s";
    static final List<String> TRANSPORTS = List.of(VerbsTransportProvider.NAME, "shm", "tcp");

    private IdleManagersMain() {
    }

    public static void main(String[] args) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        OpenedVerbs holderVerbs = new OpenedVerbs();
        try (Arena arena = Arena.ofShared();
             RdmaManager owner = RdmaManager.newBuilder().isolated().providers(providers(ownerVerbs))
                     .set("rdma.ibverbs.target", "nic:rxe1")
                     .set(VerbsSettings.PEER_CHECK_INTERVAL.key(), PEER_CHECK_INTERVAL).build();
             RdmaManager holder = RdmaManager.newBuilder().isolated().providers(providers(holderVerbs))
                     .set("rdma.ibverbs.target", "nic:rxe0")
                     .set(VerbsSettings.PEER_CHECK_INTERVAL.key(), PEER_CHECK_INTERVAL).build()) {
            long measurer = Thread.currentThread().threadId();
            for (int i = 0; i < 20; i++) {      // the measuring code, warm: run cold, under emulation, it cost this thread 200 ms in the window
                describe(threads, cpuTimes(threads), cpuTimes(threads), measurer);
                taskDeltas(taskTimes(), taskTimes());
            }
            System.out.println("READY " + String.join(",", holder.transports()));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
                String[] words = line.trim().split(" ");
                if (!words[0].equals("measure")) {
                    System.out.println("ERR unknown command " + words[0]);
                    System.out.flush();
                    continue;
                }
                RdmaBuffer allocated = owner.allocate(1 << 20).join();
                RdmaRemoteBuffer registered = words[2].equals("both")
                        ? owner.register(arena.allocate(1 << 20, 4096)).join() : allocated.remote();
                MemorySegment local = arena.allocate(1 << 20, 4096);
                for (int i = 0; i < 300; i++) {   // the burst: small and large ops over each transport
                    for (String transport : TRANSPORTS) {
                        RdmaRemoteBuffer remote = (i & 1) == 0 ? allocated.remote() : registered;
                        long size = i % 50 == 0 ? 1 << 20 : 64;
                        holder.newAction().requireTransport(transport).readInto(remote.slice(0, size), local.asSlice(0, size))
                                .submit(TIMEOUT).join();
                    }
                }
                // The first liveness rounds (PEER_CHECK_INTERVAL after the first handshake) run cold code: in the
                // emulated VM 85 to 176 ms of CPU on the watchdog and as much serving the probe. Measured after
                // them: the next come an interval after each ended, after the window (docs/verbs-notes.md has
                // what a warm round costs).
                long roundsBy = System.nanoTime() + TIMEOUT.toNanos() * 2;
                while ((ownerVerbs.transport().sweepRoundsEnded() == 0 || holderVerbs.transport().sweepRoundsEnded() == 0)
                        && System.nanoTime() - roundsBy < 0) {
                    LockSupport.parkNanos(100_000_000L);     // a bounded poll of the sweeps' round counts
                }
                long window = Long.parseLong(words[1]) * 1_000_000L;
                Map<Long, Long> before = cpuTimes(threads);
                Map<String, long[]> tasksBefore = taskTimes();
                long end = System.nanoTime() + window;
                while (System.nanoTime() < end) {
                    LockSupport.parkNanos(end - System.nanoTime()); // the measuring window: nothing to wait for
                }
                Map<Long, Long> after = cpuTimes(threads);
                String tasks = taskDeltas(tasksBefore, taskTimes());
                System.out.println("IDLE " + describe(threads, before, after, measurer) + " window-ns=" + window + " tasks=" + tasks);
                System.out.flush();
            }
        }
    }

    /**
     * Per thread of this process, as the kernel counts it ({@code /proc/self/task/<tid>/schedstat}:
     * time on a CPU in ns, and the number of times it was put on a CPU, about its wake-ups), keyed
     * by {@code tid:comm}: the JVM's own threads (compiler, collector, periodic task) included.
     */
    static Map<String, long[]> taskTimes() {
        Map<String, long[]> times = new HashMap<>();
        java.io.File[] tasks = new java.io.File("/proc/self/task").listFiles();
        if (tasks == null) {
            return times;
        }
        for (java.io.File t : tasks) {
            try {
                String comm = Files.readString(t.toPath().resolve("comm")).trim().replace(' ', '_').replace(',', '_');
                String[] stat = Files.readString(t.toPath().resolve("schedstat")).trim().split(" ");
                times.put(t.getName() + ":" + comm, new long[] {Long.parseLong(stat[0]), Long.parseLong(stat[2])});
            } catch (IOException | RuntimeException gone) {
                // the thread ended meanwhile
            }
        }
        return times;
    }

    /** {@code comm:cpu-us/slices} per thread that ran between the two, most CPU first. */
    static String taskDeltas(Map<String, long[]> before, Map<String, long[]> after) {
        List<String> ran = new java.util.ArrayList<>();
        after.entrySet().stream()
                .map(e -> {
                    long[] b = before.getOrDefault(e.getKey(), new long[2]);
                    return Map.entry(e.getKey().substring(e.getKey().indexOf(':') + 1),
                            new long[] {e.getValue()[0] - b[0], e.getValue()[1] - b[1]});
                })
                .filter(e -> e.getValue()[1] > 0)
                .sorted((x, y) -> Long.compare(y.getValue()[0], x.getValue()[0]))
                .forEach(e -> ran.add(e.getKey() + ":" + e.getValue()[0] / 1000 + "us/" + e.getValue()[1]));
        return String.join(",", ran);
    }

    /**
     * {@code used-ns=<n> measurer-ns=<n> threads-over-1ms=<name ms,...>}: the CPU time every thread
     * but the measuring one ({@code measurer}) used between the two snapshots, the measuring
     * thread's own (parked through the window, it spends its share taking the snapshots: not the
     * managers'), and the threads that used a millisecond or more.
     */
    private static String describe(ThreadMXBean threads, Map<Long, Long> before, Map<Long, Long> after, long measurer) {
        long used = 0;
        long measuring = 0;
        StringBuilder busiest = new StringBuilder();
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (e.getKey() == measurer) {
                measuring = d;
                continue;
            }
            used += d;
            ThreadInfo info = threads.getThreadInfo(e.getKey());
            if (d >= 1_000_000 && info != null) {
                busiest.append(info.getThreadName().replace(' ', '_')).append(' ').append(d / 1_000_000).append("ms,");
            }
        }
        return "used-ns=" + used + " measurer-ns=" + measuring + " threads-over-1ms=" + busiest;
    }

    /** Every provider on the class path (ibverbs, shm, tcp), the ibverbs one through {@code verbs}. */
    private static List<io.rdma4j.spi.TransportProvider> providers(OpenedVerbs verbs) {
        List<io.rdma4j.spi.TransportProvider> all = new java.util.ArrayList<>();
        for (io.rdma4j.spi.TransportProvider p : java.util.ServiceLoader.load(io.rdma4j.spi.TransportProvider.class)) {
            all.add(p.name().equals(VerbsTransportProvider.NAME) ? verbs : p);
        }
        return all;
    }

    private static Map<Long, Long> cpuTimes(ThreadMXBean threads) {
        Map<Long, Long> times = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            long t = threads.getThreadCpuTime(id);
            if (t >= 0) {
                times.put(id, t);
            }
        }
        return times;
    }
}
