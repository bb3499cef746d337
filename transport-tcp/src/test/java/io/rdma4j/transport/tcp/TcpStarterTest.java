package io.rdma4j.transport.tcp;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A thread that joins its submits at once has later ones run by its join, without waking a pool
 * thread; a submit nobody joins still starts on the pool. Each scenario runs on a fresh thread,
 * since a thread's habit outlives a test. The "pool" here records the submits it was asked to
 * start; the deferral is either far beyond any scheduling delay or zero, so nothing depends on timing.
 */
@Timeout(30)
class TcpStarterTest {

    private static final long FOREVER = TimeUnit.SECONDS.toNanos(60);

    private final TcpThreads threads = new TcpThreads();
    /** The submits the starter handed to the pool, in order. */
    private final LinkedBlockingQueue<TcpSubmission> startedOnPool = new LinkedBlockingQueue<>();

    @AfterEach
    void tearDown() {
        assertEquals(List.of(), threads.awaitAll(Duration.ofSeconds(10)), "threads left running");
        threads.shutdown();
    }

    private TcpStarter starter(long deferNanos) {
        return new TcpStarter(threads, startedOnPool::add, FOREVER, deferNanos, TimeUnit.MICROSECONDS.toNanos(200), 0);
    }

    /** A submit whose work records the thread that ran it and completes it. */
    private static TcpSubmission submit(List<Thread> ranOn) {
        return TcpSubmissionTest.submission(self -> {
            ranOn.add(Thread.currentThread());
            self.finish(null);
        });
    }

    @Test
    void submit_afterJoinsAtOnce_isLeftToItsJoiner_whoRunsIt_andNoPoolThreadIsStarted() throws Exception {
        TcpStarter starter = starter(FOREVER);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        List<TcpSubmission> submits = new ArrayList<>();

        Thread caller = onFreshThread(() -> {
            for (int i = 0; i <= TcpStarter.STREAK; i++) {
                TcpSubmission s = submit(ranOn);
                submits.add(s);
                starter.start(s);
                s.runOnJoin(); // the manager's join()
            }
        });
        starter.close();

        assertEquals(submits.subList(0, TcpStarter.STREAK), List.copyOf(startedOnPool));
        TcpSubmission last = submits.getLast();
        assertTrue(last.isDone());
        assertSame(caller, ranOn.getLast());
    }

    @Test
    void deferredSubmit_thatNobodyJoins_startsOnThePool_andTheThreadsNextSubmitStartsAtOnce() throws Exception {
        TcpStarter starter = starter(0);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        AtomicReference<TcpSubmission> unjoined = new AtomicReference<>();
        AtomicReference<TcpSubmission> next = new AtomicReference<>();

        onFreshThread(() -> {
            for (int i = 0; i < TcpStarter.STREAK; i++) {
                TcpSubmission s = submit(ranOn);
                starter.start(s);
                s.runOnJoin();
            }
            startedOnPool.clear();
            unjoined.set(submit(ranOn));
            starter.start(unjoined.get()); // deferred: this thread joined its last submits at once
            assertSame(unjoined.get(), startedOnPool.poll(10, TimeUnit.SECONDS), "the starter did not start it");
            next.set(submit(ranOn));
            starter.start(next.get());
        });
        starter.close();

        assertEquals(List.of(next.get()), List.copyOf(startedOnPool), "the submit after an unjoined one waited");
        assertFalse(unjoined.get().isClaimed(), "nothing but the pool may claim it here");
    }

    @Test
    void deferredSubmit_thatItsThreadLeavesUnjoined_isStartedByTheThreadsNextSubmit_whichStartsToo() throws Exception {
        TcpStarter starter = starter(FOREVER);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        List<TcpSubmission> lastTwo = new ArrayList<>();

        onFreshThread(() -> {
            for (int i = 0; i < TcpStarter.STREAK; i++) {
                TcpSubmission s = submit(ranOn);
                starter.start(s);
                s.runOnJoin();
            }
            startedOnPool.clear();
            TcpSubmission unjoined = submit(ranOn);
            starter.start(unjoined); // deferred
            assertEquals(List.of(), List.copyOf(startedOnPool));
            TcpSubmission next = submit(ranOn);
            starter.start(next);
            lastTwo.add(unjoined);
            lastTwo.add(next);
        });
        starter.close();

        assertEquals(lastTwo, List.copyOf(startedOnPool));
    }

    @Test
    void submits_joinedOnlyAfterTheNextSubmit_areNeverDeferred() throws Exception {
        TcpStarter starter = starter(FOREVER);
        List<Thread> ranOn = new CopyOnWriteArrayList<>();
        List<TcpSubmission> submits = new ArrayList<>();

        onFreshThread(() -> {
            for (int i = 0; i < 4 * TcpStarter.STREAK; i++) {
                TcpSubmission first = submit(ranOn);
                TcpSubmission second = submit(ranOn);
                starter.start(first);
                starter.start(second);
                first.runOnJoin();
                second.runOnJoin();
                submits.add(first);
                submits.add(second);
            }
        });
        starter.close();

        assertEquals(submits, List.copyOf(startedOnPool));
    }

    @FunctionalInterface
    private interface Body {
        void run() throws Exception;
    }

    /** Runs {@code body} on a new thread, rethrowing what it threw; returns that thread. */
    private static Thread onFreshThread(Body body) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread t = Thread.ofPlatform().start(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        t.join();
        if (failure.get() instanceof Exception e) {
            throw e;
        }
        if (failure.get() instanceof Error e) {
            throw e;
        }
        return t;
    }
}
