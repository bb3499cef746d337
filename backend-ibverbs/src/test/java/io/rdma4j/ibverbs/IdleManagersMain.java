package io.rdma4j.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
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
 * milliseconds of nothing to do, and answers {@code IDLE used-ns=<n> window-ns=<n>
 * threads-over-1ms=<name ms, ...>}.
 */
public final class IdleManagersMain {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final List<String> TRANSPORTS = List.of(VerbsTransportProvider.NAME, "shm", "tcp");

    private IdleManagersMain() {
    }

    public static void main(String[] args) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofShared();
             RdmaManager owner = RdmaManager.newBuilder().isolated().set("rdma.ibverbs.target", "nic:rxe1").build();
             RdmaManager holder = RdmaManager.newBuilder().isolated().set("rdma.ibverbs.target", "nic:rxe0").build()) {
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
                long window = Long.parseLong(words[1]) * 1_000_000L;
                Map<Long, Long> before = cpuTimes(threads);
                long end = System.nanoTime() + window;
                while (System.nanoTime() < end) {
                    LockSupport.parkNanos(end - System.nanoTime()); // the measuring window: nothing to wait for
                }
                Map<Long, Long> after = cpuTimes(threads);
                long used = 0;
                StringBuilder busiest = new StringBuilder();
                for (Map.Entry<Long, Long> e : after.entrySet()) {
                    long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
                    used += d;
                    ThreadInfo info = threads.getThreadInfo(e.getKey());
                    if (d >= 1_000_000 && info != null) {
                        busiest.append(info.getThreadName().replace(' ', '_')).append(' ').append(d / 1_000_000).append("ms,");
                    }
                }
                System.out.println("IDLE used-ns=" + used + " window-ns=" + window + " threads-over-1ms=" + busiest);
                System.out.flush();
            }
        }
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
