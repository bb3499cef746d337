package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The VM's network delivers a queue pair's packets in the order soft-RoCE sent them, which the
 * measurements and the other tests rely on: {@code bin/softroce-vm} has both veth ends receive on
 * one CPU. Without that, packets of one message sent from two CPUs (soft-RoCE sends from whichever
 * CPU posts, or takes an ACK) overtook each other in the CPUs' receive backlogs; the receiver
 * NAKed each gap and the sender resent everything after it, each resend counting against the
 * queue pair's retry limit ("transport retry counter exceeded" once it ran out). The receiving
 * device's {@code out_of_seq_request} counter counts the packets that arrived after a gap. (The
 * sender's {@code completer_retry_err} counts resends of any cause, including an ACK later than the
 * queue pair's timeout, about 67 ms, which the emulated VM sometimes stalls for: resends in 4 of
 * 13 runs, 4, 1, 1 and 1 of them, with no packet out of order.)
 */
@Tag("softroce")
class SoftRoceInOrderVmTest {

    private static final long SIZE = 1 << 20;
    private static final int THREADS = 2;
    private static final int WRITES_PER_THREAD = 256;
    private static final int IN_FLIGHT_PER_THREAD = 4;
    private static final Path OUT_OF_ORDER = Path.of("/sys/class/infiniband/rxe1/ports/1/hw_counters/out_of_seq_request");
    private static final Path RESENDS = Path.of("/sys/class/infiniband/rxe0/ports/1/hw_counters/completer_retry_err");

    @Test
    void megabyteWritesPostedFromTwoThreads_toOneQueuePair_arriveInOrder() throws Exception {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 16); Arena arena = Arena.ofShared();
             WorkCompletions wcs = WorkCompletions.allocate(16)) {
            ExecutorService posters = Executors.newFixedThreadPool(THREADS);
            try {
                MemoryRegion local = pair.a.pd.register(arena.allocate(SIZE * THREADS, 4096), RcPair.ACCESS);
                MemoryRegion remote = pair.b.pd.register(arena.allocate(SIZE * THREADS, 4096), RcPair.ACCESS);
                Semaphore[] credits = new Semaphore[THREADS];
                List<Future<?>> posting = new ArrayList<>();
                long outOfOrderBefore = counter(OUT_OF_ORDER);
                long resendsBefore = counter(RESENDS);

                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    credits[t] = new Semaphore(IN_FLIGHT_PER_THREAD);
                    posting.add(posters.submit(() -> {
                        try (SendWorkRequests wr = SendWorkRequests.allocate(1, 1)) {
                            for (int i = 0; i < WRITES_PER_THREAD; i++) {
                                credits[thread].acquire();
                                wr.setRdma(0, thread, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED, local, thread * SIZE, (int) SIZE,
                                        remote.address() + thread * SIZE, remote.rkey());
                                synchronized (pair) {       // one poster at a time on a queue pair
                                    pair.a.qp.postSend(wr, 1);
                                }
                            }
                        }
                        return null;
                    }));
                }
                long deadline = System.nanoTime() + RcPair.DEADLINE.toNanos();
                for (int done = 0; done < THREADS * WRITES_PER_THREAD; ) {
                    int n = pair.a.cq.poll(wcs);
                    for (int i = 0; i < n; i++) {
                        if (wcs.status(i) != Ibv.IBV_WC_SUCCESS) {
                            fail("write " + done + " failed: " + WorkCompletions.statusText(wcs.status(i)));
                        }
                        credits[(int) wcs.workRequestId(i)].release();
                    }
                    done += n;
                    for (Future<?> f : posting) {
                        if (f.isDone()) {
                            f.get();        // a poster's failure, if any
                        }
                    }
                    if (n == 0 && System.nanoTime() - deadline > 0) {
                        fail("only " + done + " of " + THREADS * WRITES_PER_THREAD + " writes completed within " + RcPair.DEADLINE);
                    }
                }

                assertEquals(0, counter(OUT_OF_ORDER) - outOfOrderBefore, "packets out of order (rxe1 out_of_seq_request) during "
                        + THREADS * WRITES_PER_THREAD + " writes of 1 MiB from " + THREADS + " threads; resends of any cause "
                        + "(rxe0 completer_retry_err): " + (counter(RESENDS) - resendsBefore));
            } finally {
                posters.shutdownNow();      // no poster may still post when the queue pair is freed
                if (!posters.awaitTermination(RcPair.DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                    fail("a posting thread did not stop");
                }
            }
        }
    }

    private static long counter(Path file) throws IOException {
        return Long.parseLong(Files.readString(file).trim());
    }
}
