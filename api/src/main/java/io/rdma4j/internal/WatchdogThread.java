package io.rdma4j.internal;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.Watchdog;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The manager's {@link Watchdog}: runs an action when a deadline passes unless it was disarmed
 * first. The manager builds one per manager, hands it to its transports through
 * {@link io.rdma4j.spi.TransportContext#watchdog()}, and closes it last.
 *
 * <p>Built for the data path, where a guard is armed and disarmed around every op: arming and
 * disarming are a set insert and remove, and wake no thread unless the new guard is due before
 * the sweeper planned to look next. One daemon platform thread, shared by a manager and all its
 * transports, sleeps until the earliest armed guard is due (at least {@value Watchdog#TICK_MILLIS} ms), fires
 * what is due, and once nothing is armed parks until the next {@link #arm}, which then wakes it:
 * an idle watchdog costs no CPU and no wake-up. A guard disarmed before it was due costs at most
 * the one wake-up the sweeper had planned for it (it does not wake the sweeper to say so); on a
 * machine that charges a millisecond or more of CPU to a timer wake-up (an emulated VM) that
 * matters: a sweeper that ticked every 10 ms for 2 s after the last guard went, as this one did,
 * cost an idle manager twice its budget there. The price is precision: an action runs up to one
 * tick late.
 *
 * <p>Actions run on the sweeper thread and must be short and must not throw (a throw is logged).
 * After {@link #close()}, {@link #arm} runs the action at once: nothing outlives the watchdog unbounded.
 */
public final class WatchdogThread implements Watchdog, AutoCloseable {

    private static final System.Logger LOG = System.getLogger(WatchdogThread.class.getName());
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(Watchdog.TICK_MILLIS);

    private final Set<Armed> armed = ConcurrentHashMap.newKeySet();
    private final NanoClock clock;
    private final Thread sweeper;
    private final java.util.concurrent.atomic.AtomicLong armings = new java.util.concurrent.atomic.AtomicLong();
    /** When the sweeper plans to look next, on the clock; guards due a tick before it wake it. */
    private volatile long wakeAt = AWAKE;
    private static final long AWAKE = Long.MIN_VALUE;
    private volatile boolean idle;
    /** Times the sweeper came back from parking; written by the sweeper only. */
    private volatile long wakeups;
    private volatile boolean closed;

    /**
     * Starts the sweeper thread, named {@code threadName}.
     *
     * @param threadName the name of the daemon sweeper thread
     */
    public WatchdogThread(String threadName) {
        this(threadName, NanoClock.SYSTEM);
    }

    /**
     * Starts the sweeper thread, named {@code threadName}, reading time from {@code clock}.
     *
     * @param threadName the name of the daemon sweeper thread
     * @param clock      where the time comes from; a test clock makes guards fire when the test
     *                   moves it (and the sweeper, or {@link #sweepNow()}, next looks)
     */
    public WatchdogThread(String threadName, NanoClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        this.sweeper = Thread.ofPlatform().name(threadName).daemon().unstarted(this::sweep);
        sweeper.start();
    }

    @Override
    public Guard arm(Deadline deadline, Runnable onExpiry) {
        return armAt(clock.nanoTime() + deadline.remainingNanos(), onExpiry);
    }

    @Override
    public Guard arm(long delayNanos, Runnable onExpiry) {
        return armAt(clock.nanoTime() + Math.max(0, delayNanos), onExpiry);
    }

    private Guard armAt(long dueNanos, Runnable onExpiry) {
        Armed g = new Armed(dueNanos, Objects.requireNonNull(onExpiry, "onExpiry"), armings.incrementAndGet());
        armed.add(g);
        if (closed) {
            g.fire();
        } else if (idle || mustWake(dueNanos)) {
            LockSupport.unpark(sweeper);
        }
        return g;
    }

    /**
     * Fires, on the calling thread, every guard whose time has come on the clock. The sweeper does
     * the same every tick; tests with a hand-moved clock call this instead of waiting for it.
     *
     * @return how many guards fired
     */
    public int sweepNow() {
        long now = clock.nanoTime();
        int fired = 0;
        for (Armed g : armed) {
            if (now - g.dueNanos >= 0 && g.fire()) {
                fired++;
            }
        }
        return fired;
    }

    /** Whether a guard due at {@code dueNanos} comes a tick or more before the sweeper's planned wake-up. */
    private boolean mustWake(long dueNanos) {
        long w = wakeAt;
        return w != AWAKE && dueNanos + TICK_NANOS - w < 0;
    }

    /** Fires what is due at {@code now}; returns how long until the earliest guard left, or -1 when none. */
    private long fireDue(long now) {
        long next = -1;
        for (Armed g : armed) {
            long wait = g.dueNanos - now;
            if (wait <= 0) {
                g.fire();
            } else if (next < 0 || wait < next) {
                next = wait;
            }
        }
        return next;
    }

    /** Times the sweeper came back from parking (tests: an idle watchdog does not tick). */
    long wakeups() {
        return wakeups;
    }

    /** Whether the sweeper is parked with nothing armed (tests). */
    boolean isIdle() {
        return idle;
    }

    /**
     * Number of armed guards (tests, diagnostics).
     *
     * @return the guards neither fired nor disarmed yet
     */
    public int armedCount() {
        return armed.size();
    }

    private void sweep() {
        while (!closed) {
            long seen = armings.get();
            long now = clock.nanoTime();
            long next = fireDue(now);
            if (next >= 0) {
                long sleep = Math.max(TICK_NANOS, next);
                wakeAt = now + sleep;
                if (armings.get() == seen) { // a guard armed after this sees wakeAt and wakes us if it must
                    LockSupport.parkNanos(this, sleep);
                    wakeups++;
                }
                wakeAt = AWAKE;
            } else {
                idle = true;
                if (armed.isEmpty() && !closed) { // an arm() after this check sees idle and unparks us
                    LockSupport.park(this);
                    wakeups++;
                }
                idle = false;
            }
        }
        armed.forEach(Armed::fire);
    }

    /** Stops the sweeper; every armed guard fires now. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        LockSupport.unpark(sweeper);
        if (Thread.currentThread() != sweeper) {
            try {
                sweeper.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        armed.forEach(Armed::fire);
    }

    /** One armed action. */
    private final class Armed implements Guard {
        private static final int ARMED = 0;
        private static final int DISARMED = 1;
        private static final int FIRED = 2;

        private final long dueNanos;
        private final Runnable onExpiry;
        private final AtomicInteger state = new AtomicInteger(ARMED);
        /** From the arming's sequence number: the identity hash would cost its first use on every guard. */
        private final int hash;

        private Armed(long dueNanos, Runnable onExpiry, long sequence) {
            this.dueNanos = dueNanos;
            this.onExpiry = onExpiry;
            this.hash = (int) (sequence * 0x9E3779B97F4A7C15L >>> 32);
        }

        /** Spreads guards over the armed set; equality stays identity. */
        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public boolean disarm() {
            if (state.compareAndSet(ARMED, DISARMED)) {
                armed.remove(this);
                return true;
            }
            return state.get() == DISARMED;
        }

        @Override
        public boolean fired() {
            return state.get() == FIRED;
        }

        private boolean fire() {
            if (!state.compareAndSet(ARMED, FIRED)) {
                return false;
            }
            armed.remove(this);
            try {
                onExpiry.run();
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.WARNING, "watchdog action failed", e);
            }
            return true;
        }
    }
}
