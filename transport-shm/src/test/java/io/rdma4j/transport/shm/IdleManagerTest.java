package io.rdma4j.transport.shm;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Idle is idle: open managers running shm and tcp, with an allocated and a caller-registered
 * buffer (whose arena the shm transport watches), use almost no CPU once a burst of traffic over
 * both transports has ended. Measured as the CPU time of the JVM's threads (those
 * {@link ThreadMXBean} lists: every platform thread, the carriers of virtual threads included;
 * not the JIT compiler's or the collector's, which serve the test's own code as much, nor the test
 * runner's) over 10 s.
 */
class IdleManagerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long WINDOW_NANOS = 10_000_000_000L;

    @Test
    void managersWithShmAndTcpAndRegisteredBuffers_useUnderOnePercentOfACoreOverTenSecondsAfterABurst() {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadCpuTimeSupported(), "this JVM cannot tell thread CPU times");
        try (Arena arena = Arena.ofShared();
             RdmaManager owner = RdmaManager.newBuilder().isolated().build();
             RdmaManager holder = RdmaManager.newBuilder().isolated().build()) {
            assertEquals(java.util.Set.of("shm", "tcp"), java.util.Set.copyOf(owner.transports()));
            RdmaBuffer allocated = owner.allocate(1 << 20).join();
            RdmaRemoteBuffer registered = owner.register(arena.allocate(1 << 20)).join();
            MemorySegment local = arena.allocate(1 << 20);
            for (int i = 0; i < 2_000; i++) {   // the burst: small and large ops over each transport
                for (String transport : new String[] {"shm", "tcp"}) {
                    RdmaRemoteBuffer remote = (i & 1) == 0 ? allocated.remote() : registered;
                    long size = i % 100 == 0 ? 1 << 20 : 64;
                    holder.newAction().requireTransport(transport).readInto(remote.slice(0, size), local)
                            .submit(TIMEOUT).join();
                }
            }

            Map<Long, Long> before = cpuTimes(threads);
            long end = System.nanoTime() + WINDOW_NANOS;
            while (System.nanoTime() < end) {
                LockSupport.parkNanos(end - System.nanoTime()); // the measuring window: nothing to wait for
            }
            Map<Long, Long> after = cpuTimes(threads);

            long used = 0;
            StringBuilder busiest = new StringBuilder();
            for (Map.Entry<Long, Long> e : after.entrySet()) {
                long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
                used += d;
                java.lang.management.ThreadInfo info = threads.getThreadInfo(e.getKey());
                if (d >= 1_000_000 && info != null) {
                    busiest.append(' ').append(info.getThreadName()).append(' ').append(d / 1_000_000).append(" ms");
                }
            }
            System.out.println("idle managers: " + used / 1_000 + " us of thread CPU in " + WINDOW_NANOS / 1_000_000
                    + " ms; threads over 1 ms:" + busiest);
            assertTrue(used < WINDOW_NANOS / 100, "the idle managers' JVM used " + used / 1_000_000 + " ms of CPU in "
                    + WINDOW_NANOS / 1_000_000 + " ms, over 1% of a core; threads over 1 ms:" + busiest);
        }
    }

    private static Map<Long, Long> cpuTimes(ThreadMXBean threads) {
        Map<Long, Long> times = new HashMap<>();
        for (long id : threads.getAllThreadIds()) {
            java.lang.management.ThreadInfo info = threads.getThreadInfo(id);
            if (info == null || info.getThreadName().startsWith("surefire")) {
                continue;   // the test runner's own threads
            }
            long t = threads.getThreadCpuTime(id);
            if (t >= 0) {
                times.put(id, t);
            }
        }
        return times;
    }
}
