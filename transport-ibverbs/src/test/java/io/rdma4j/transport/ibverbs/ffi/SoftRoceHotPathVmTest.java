package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Posting and polling allocate no Java objects: the bytes this thread allocates across thousands
 * of post/poll round trips (as the JVM counts them) stay at zero, measured after a warm-up so
 * that one-time linkage of the call sites is not counted.
 */
@Tag("softroce")
class SoftRoceHotPathVmTest {

    private static final int WARM_UP = 2_000;
    private static final int MEASURED = 5_000;
    private static final int BATCH = 4;

    @Test
    void postSendAndPoll_allocateNothingPerOperation() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 16); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(BATCH, 1); WorkCompletions wcs = WorkCompletions.allocate(BATCH)) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(4096), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(4096), RcPair.ACCESS);
            roundTrips(pair, wrs, wcs, local, remote, WARM_UP);

            long before = threads.getCurrentThreadAllocatedBytes();
            long completed = roundTrips(pair, wrs, wcs, local, remote, MEASURED);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;

            assertEquals((long) MEASURED * BATCH, completed);
            assertEquals(0, allocated, "bytes allocated over " + MEASURED * BATCH + " posted and polled work requests");
        }
    }

    /** {@code rounds} times: fill and post {@link #BATCH} 8-byte writes, poll until all completed. */
    private static long roundTrips(RcPair pair, SendWorkRequests wrs, WorkCompletions wcs, MemoryRegion local,
                                   MemoryRegion remote, int rounds) {
        long completed = 0;
        long deadline = System.nanoTime() + RcPair.DEADLINE.toNanos();
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < BATCH; i++) {
                wrs.setRdma(i, r * BATCH + i, i % 2 == 0 ? Ibv.IBV_WR_RDMA_WRITE : Ibv.IBV_WR_RDMA_READ,
                        Ibv.IBV_SEND_SIGNALED, local, i * 8L, 8, remote.address() + i * 8L, remote.rkey());
            }
            pair.a.qp.postSend(wrs, BATCH);
            int seen = 0;
            while (seen < BATCH) {
                int n = pair.a.cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    if (wcs.status(i) != Ibv.IBV_WC_SUCCESS) {
                        fail("work request " + wcs.workRequestId(i) + ": " + WorkCompletions.statusText(wcs.status(i)));
                    }
                }
                seen += n;
                if (n == 0 && System.nanoTime() - deadline > 0) {
                    fail("round " + r + " did not complete within " + RcPair.DEADLINE);
                }
            }
            completed += seen;
        }
        return completed;
    }
}
