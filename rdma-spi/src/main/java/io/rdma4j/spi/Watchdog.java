package io.rdma4j.spi;

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs an action when a deadline passes unless it was disarmed first: the way to bound blocking
 * I/O in time (the action closes the channel, which wakes the blocked thread).
 *
 * <p>Built for the data path, where a guard is armed and disarmed around every chunk: arming
 * and disarming are a map insert and remove, and never wake a thread. One daemon platform thread
 * sweeps the armed guards every {@value #TICK_MILLIS} ms while any are armed (and for a few seconds
 * after, so that a busy stream of short guards does not wake it each time), then parks until the
 * next {@link #arm}. The price is precision: an action runs up to one tick late.
 *
 * <p>Actions run on the sweeper thread and must be short and must not throw (a throw is logged).
 * After {@link #close()}, {@link #arm} runs the action at once: nothing outlives the watchdog unbounded.
 */
public final class Watchdog implements AutoCloseable {

    /** Sweep period while guards are armed. */
    public static final long TICK_MILLIS = 10;

    private static final System.Logger LOG = System.getLogger(Watchdog.class.getName());
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
    private static final long DEFAULT_LINGER_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Set<Guard> armed = ConcurrentHashMap.newKeySet();
    private final long lingerNanos;
    private final Thread sweeper;
    private volatile boolean idle;
    private volatile boolean closed;

    /**
     * Starts the sweeper thread, named {@code threadName}.
     *
     * @param threadName the name of the daemon sweeper thread
     */
    public Watchdog(String threadName) {
        this(threadName, DEFAULT_LINGER_NANOS);
    }

    /** With how long the sweeper keeps ticking after the last guard went (tests: 0). */
    Watchdog(String threadName, long lingerNanos) {
        this.lingerNanos = lingerNanos;
        this.sweeper = Thread.ofPlatform().name(threadName).daemon().unstarted(this::sweep);
        sweeper.start();
    }

    /**
     * Runs {@code onExpiry} once {@code deadline} has passed, unless the guard is disarmed first.
     *
     * @param deadline when the action runs, up to one tick late
     * @param onExpiry the action; runs on the sweeper thread, must be short and must not throw
     * @return the guard; close or disarm it when the guarded work finished
     */
    public Guard arm(Deadline deadline, Runnable onExpiry) {
        return armAt(System.nanoTime() + deadline.remainingNanos(), onExpiry);
    }

    /**
     * Runs {@code onExpiry} after {@code delayNanos}, unless the guard is disarmed first.
     *
     * @param delayNanos the delay from now, in nanoseconds; a negative one counts as zero
     * @param onExpiry   the action; runs on the sweeper thread, must be short and must not throw
     * @return the guard; close or disarm it when the guarded work finished
     */
    public Guard arm(long delayNanos, Runnable onExpiry) {
        return armAt(System.nanoTime() + Math.max(0, delayNanos), onExpiry);
    }

    private Guard armAt(long dueNanos, Runnable onExpiry) {
        Guard g = new Guard(dueNanos, Objects.requireNonNull(onExpiry, "onExpiry"));
        armed.add(g);
        if (closed) {
            g.fire();
        } else if (idle) {
            LockSupport.unpark(sweeper);
        }
        return g;
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
        long lastBusy = System.nanoTime();
        while (!closed) {
            long now = System.nanoTime();
            for (Guard g : armed) {
                if (now - g.dueNanos >= 0) {
                    g.fire();
                }
            }
            if (!armed.isEmpty()) {
                lastBusy = now;
                LockSupport.parkNanos(this, TICK_NANOS);
            } else if (now - lastBusy < lingerNanos) {
                LockSupport.parkNanos(this, TICK_NANOS);
            } else {
                idle = true;
                if (armed.isEmpty() && !closed) { // an arm() after this check sees idle and unparks us
                    LockSupport.park(this);
                }
                idle = false;
                lastBusy = System.nanoTime();
            }
        }
        armed.forEach(Guard::fire);
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
        armed.forEach(Guard::fire);
    }

    /** One armed action. */
    public final class Guard implements AutoCloseable {
        private static final int ARMED = 0;
        private static final int DISARMED = 1;
        private static final int FIRED = 2;

        private final long dueNanos;
        private final Runnable onExpiry;
        private final AtomicInteger state = new AtomicInteger(ARMED);

        private Guard(long dueNanos, Runnable onExpiry) {
            this.dueNanos = dueNanos;
            this.onExpiry = onExpiry;
        }

        /**
         * Cancels the action.
         *
         * @return true if it will never run; false if it ran or is running
         */
        public boolean disarm() {
            if (state.compareAndSet(ARMED, DISARMED)) {
                armed.remove(this);
                return true;
            }
            return state.get() == DISARMED;
        }

        /**
         * Whether the action ran (or is running).
         *
         * @return {@code true} once the action started
         */
        public boolean fired() {
            return state.get() == FIRED;
        }

        /** Same as {@link #disarm()}. */
        @Override
        public void close() {
            disarm();
        }

        private void fire() {
            if (state.compareAndSet(ARMED, FIRED)) {
                armed.remove(this);
                try {
                    onExpiry.run();
                } catch (RuntimeException | Error e) {
                    LOG.log(System.Logger.Level.WARNING, "watchdog action failed", e);
                }
            }
        }
    }
}
