package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.rdma4j.transport.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A submit's ops run on exactly one thread: the first that claims them, the pool's or a waiting caller's. */
class TcpSubmissionTest {

    /** A submission of no ops whose work is {@code work}. */
    static TcpSubmission submission(TcpSubmission.Work work) {
        return new TcpSubmission(List.of(), Deadline.after(Duration.ofSeconds(10)), Duration.ofSeconds(10).toNanos(), work, 1);
    }

    @Test
    void run_unclaimed_runsTheWorkOnTheCallingThreadAndCompletes() {
        AtomicReference<Thread> ranOn = new AtomicReference<>();
        TcpSubmission s = submission(self -> {
            ranOn.set(Thread.currentThread());
            self.finish(null);
        });

        s.runOnJoin();

        assertSame(Thread.currentThread(), ranOn.get());
        assertTrue(s.isDone());
        assertFalse(s.isCompletedExceptionally());
    }

    @Test
    void run_twice_runsTheWorkOnce() {
        AtomicInteger runs = new AtomicInteger();
        TcpSubmission s = submission(self -> runs.incrementAndGet()); // leaves the future incomplete

        s.runOnJoin();
        s.runOnJoin();

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

        s.runOnJoin(); // returns although the claiming thread holds on: it does not wait for it

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

        s.runOnJoin();

        assertEquals(0, runs.get());
        assertFalse(s.claimedBy(Thread.currentThread()));
    }

    @Test
    void finish_afterAbort_leavesTheFutureToWhoeverAborted() {
        TcpSubmission s = submission(self -> self.finish(null));
        s.abort();

        s.runOnJoin();

        assertFalse(s.isDone());
        CompletableFuture<Void> f = s;
        assertTrue(f.completeExceptionally(new IllegalStateException("closed")));
    }

    @Test
    void abort_whileAWorkerExchanges_closesItsConnectionAndReturnsOnlyAfterTheWorkerLeft() throws Exception {
        try (ServerSocketChannel silent = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            Endpoint peer = new Endpoint("127.0.0.1", ((InetSocketAddress) silent.getLocalAddress()).getPort());
            TcpConnection connection = TcpConnection.connect(peer, Deadline.after(Duration.ofSeconds(10)));
            TcpSubmission s = new TcpSubmission(List.of(), Deadline.after(Duration.ofSeconds(10)),
                    Duration.ofSeconds(10).toNanos(), self -> { }, 2);
            CountDownLatch entered = new CountDownLatch(1);
            AtomicBoolean left = new AtomicBoolean();
            AtomicReference<Throwable> readFailure = new AtomicReference<>();
            Thread worker = Thread.ofPlatform().start(() -> {
                try {
                    s.enter(1, connection); // the second worker's slot
                    entered.countDown();
                    // the peer never answers: only closing the connection ends this read
                    connection.read(1, new byte[TcpProtocol.KEY_BYTES], new byte[TcpProtocol.INCARNATION_BYTES], 0,
                            ByteBuffer.allocateDirect(8));
                } catch (Throwable t) {
                    readFailure.set(t);
                } finally {
                    left.set(true);
                    s.exit(1);
                }
            });
            entered.await();

            s.abort();

            assertTrue(left.get(), "abort() returned while the worker was still inside its exchange");
            assertFalse(connection.isOpen());
            worker.join();
            assertInstanceOf(IOException.class, readFailure.get());
        }
    }

    @Test
    void enter_afterAbort_refusesTheExchangeAndClosesTheConnection() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            Endpoint peer = new Endpoint("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
            TcpConnection connection = TcpConnection.connect(peer, Deadline.after(Duration.ofSeconds(10)));
            TcpSubmission s = submission(self -> { });
            s.abort();

            assertThrows(ClosedChannelException.class, () -> s.enter(0, connection));

            assertFalse(connection.isOpen());
            s.abort(); // nothing left inside an exchange: returns at once
        }
    }
}
