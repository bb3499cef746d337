package io.rdma4j.tcp;

import io.rdma4j.spi.Deadline;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.rdma4j.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A submit's ops run on exactly one thread: the first that claims them, the pool's or a waiting caller's. */
class TcpSubmissionTest {

    /** A submission of no ops whose work is {@code work}. */
    static TcpSubmission submission(TcpSubmission.Work work) {
        return new TcpSubmission(List.of(), Deadline.after(Duration.ofSeconds(10)), Duration.ofSeconds(10), work);
    }

    @Test
    void run_unclaimed_runsTheWorkOnTheCallingThreadAndCompletes() {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        TcpSubmission s = submission(self -> {
            ranOn.set(Thread.currentThread());
            self.finish(null);
        });

        s.run();

        assertSame(Thread.currentThread(), ranOn.get());
        assertTrue(s.isDone());
        assertFalse(s.isCompletedExceptionally());
    }

    @Test
    void run_twice_runsTheWorkOnce() {
        AtomicInteger runs = new AtomicInteger();
        TcpSubmission s = submission(self -> runs.incrementAndGet()); // leaves the future incomplete

        s.run();
        s.run();

        assertEquals(1, runs.get());
    }

    @Test
    void run_afterAnotherThreadClaimed_returnsWithoutRunningOrWaiting() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        TcpSubmission s = submission(self -> runs.incrementAndGet());
        CountDownLatch claimed = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread pool = Thread.ofPlatform().start(() -> {
            if (s.claim()) {
                claimed.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                s.finish(null);
            }
        });
        claimed.await();

        s.run(); // returns although the claiming thread holds on: it does not wait for it

        assertEquals(0, runs.get());
        assertFalse(s.isDone());
        assertTrue(s.claimedBy(pool));
        release.countDown();
        await(s);
        pool.join();
    }

    @Test
    void run_onAFailedFuture_runsNothing() {
        AtomicInteger runs = new AtomicInteger();
        TcpSubmission s = submission(self -> runs.incrementAndGet());
        s.completeExceptionally(new IllegalStateException("closed"));

        s.run();

        assertEquals(0, runs.get());
        assertFalse(s.claimedBy(Thread.currentThread()));
    }

    @Test
    void finish_afterAbort_leavesTheFutureToWhoeverAborted() {
        TcpSubmission s = submission(self -> self.finish(null));
        s.abort();

        s.run();

        assertFalse(s.isDone());
        CompletableFuture<Void> f = s;
        assertTrue(f.completeExceptionally(new IllegalStateException("closed")));
    }
}
