package io.rdma4j.internal;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.Watchdog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WatchdogThreadTest {

    private final WatchdogThread watchdog = new WatchdogThread("test-watchdog");

    @AfterEach
    void tearDown() {
        watchdog.close();
    }

    @Test
    void arm_deadlinePassed_runsTheActionOnce() throws InterruptedException {
        CountDownLatch ran = new CountDownLatch(1);

        Watchdog.Guard g = watchdog.arm(Deadline.after(Duration.ZERO), ran::countDown);

        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertTrue(g.fired());
        assertFalse(g.disarm());
        assertEquals(0, watchdog.armedCount());
    }

    @Test
    void disarm_beforeTheDeadline_actionNeverRuns_evenWhenTheWatchdogCloses() {
        AtomicInteger runs = new AtomicInteger();
        Watchdog.Guard g = watchdog.arm(Deadline.after(Duration.ofHours(1)), runs::incrementAndGet);

        assertTrue(g.disarm());
        assertTrue(g.disarm());
        watchdog.close();

        assertEquals(0, runs.get());
        assertEquals(0, watchdog.armedCount());
    }

    @Test
    void close_firesEveryArmedGuardNow() {
        AtomicInteger runs = new AtomicInteger();
        watchdog.arm(Deadline.after(Duration.ofHours(1)), runs::incrementAndGet);
        watchdog.arm(Deadline.after(Duration.ofHours(2)), runs::incrementAndGet);

        watchdog.close();

        assertEquals(2, runs.get());
    }

    @Test
    void arm_afterClose_runsTheActionAtOnce() {
        AtomicInteger runs = new AtomicInteger();
        watchdog.close();

        Watchdog.Guard g = watchdog.arm(Deadline.after(Duration.ofHours(1)), runs::incrementAndGet);

        assertEquals(1, runs.get());
        assertTrue(g.fired());
    }

    @Test
    void arm_afterTheSweeperWentIdle_wakesItAndFires() throws InterruptedException {
        try (WatchdogThread eager = new WatchdogThread("test-watchdog-idle", NanoClock.SYSTEM)) {
            CountDownLatch first = new CountDownLatch(1);
            eager.arm(0, first::countDown); // fires at once; with nothing armed the sweeper then parks for good
            assertTrue(first.await(10, TimeUnit.SECONDS));
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            boolean wentIdle;       // read once per turn: the flag was also true before the sweeper took the first guard
            while (!(wentIdle = eager.isIdle()) && System.nanoTime() < end) {
                Thread.onSpinWait();
            }
            assertTrue(wentIdle, "the sweeper parks once nothing is armed");
            CountDownLatch ran = new CountDownLatch(1);

            eager.arm(Deadline.after(Duration.ofMillis(1)), ran::countDown);

            assertTrue(ran.await(10, TimeUnit.SECONDS));
        }
    }

    /**
     * Once nothing is armed the sweeper parks for good (until the next arm), instead of ticking on:
     * a guard armed and disarmed costs it at most the wake-up it had planned for that guard.
     * Counted in wake-ups, not time. Failed before: the sweeper ticked every 10 ms for 2 s after
     * the last guard went (about 200 wake-ups).
     */
    @Test
    void guardArmedThenDisarmed_sweeperParksForGoodAfterAtMostItsPlannedWakeUp() throws InterruptedException {
        CountDownLatch first = new CountDownLatch(1);
        watchdog.arm(0, first::countDown);
        assertTrue(first.await(10, TimeUnit.SECONDS));
        awaitIdle(watchdog, -1);      // the guard fired on the sweeper, which was awake then
        long before = watchdog.wakeups();

        watchdog.arm(Deadline.after(Duration.ofMillis(50)), () -> { }).disarm();

        awaitIdle(watchdog, before);
        long wakeups = watchdog.wakeups() - before;
        assertTrue(wakeups <= 3, "the sweeper woke " + wakeups + " times for one guard armed and disarmed");
    }

    /** Waits (bounded) until the sweeper, having woken since its {@code wakeups} count was {@code since}, parks with nothing armed. */
    private static void awaitIdle(WatchdogThread w, long since) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean idle;       // read once per turn
        while (!(idle = w.wakeups() > since && w.isIdle()) && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertTrue(idle, "the sweeper parks once nothing is armed");
    }

    @Test
    void guardDueBeforeTheSweepersPlannedWakeUp_wakesItAndFires() throws InterruptedException {
        watchdog.arm(Deadline.after(Duration.ofHours(1)), () -> { }); // the sweeper now sleeps for an hour
        CountDownLatch ran = new CountDownLatch(1);

        watchdog.arm(Deadline.after(Duration.ofMillis(1)), ran::countDown);

        assertTrue(ran.await(10, TimeUnit.SECONDS));
    }

    @Test
    void action_thatThrows_doesNotStopTheWatchdog() throws InterruptedException {
        watchdog.arm(0, () -> {
            throw new IllegalStateException("boom");
        });
        CountDownLatch ran = new CountDownLatch(1);

        watchdog.arm(0, ran::countDown);

        assertTrue(ran.await(10, TimeUnit.SECONDS));
    }

    @Test
    void sweepNow_onAHandMovedClock_firesAGuardOnlyOnceItsTimeHasCome() {
        AtomicLong now = new AtomicLong();
        try (WatchdogThread manual = new WatchdogThread("test-watchdog-manual", now::get)) {
            AtomicInteger runs = new AtomicInteger();
            manual.arm(Deadline.after(Duration.ofSeconds(5), now::get), runs::incrementAndGet);

            now.addAndGet(TimeUnit.SECONDS.toNanos(4));
            assertEquals(0, manual.sweepNow());
            now.addAndGet(TimeUnit.SECONDS.toNanos(1));
            assertEquals(1, manual.sweepNow());
            assertEquals(0, manual.sweepNow());

            assertEquals(1, runs.get());
        }
    }
}
