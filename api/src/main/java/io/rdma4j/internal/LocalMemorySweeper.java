package io.rdma4j.internal;

import io.rdma4j.spi.Watchdog;

import java.time.Duration;
import java.util.List;

/**
 * Drops prepared local memory whose segments' arenas were closed ({@link LocalMemoryCache#sweep}),
 * on the manager's watchdog, and wakes it only while there may be something to drop:
 *
 * <ul>
 *   <li>No sweep is scheduled while every cache is empty; the first entry a cache gains schedules
 *       one {@link #FIRST} later.</li>
 *   <li>A sweep that drops something schedules the next {@link #FIRST} later; one that drops
 *       nothing while entries remain doubles the delay, up to {@link #LONGEST}; a cache gaining an
 *       entry brings a longer delay back to {@link #FIRST}.</li>
 * </ul>
 * So a segment whose arena closed has its preparation dropped within about {@link #FIRST} while
 * the caches are in use, and within {@link #LONGEST} after they have been quiet; an idle manager
 * with nothing cached never wakes for it. A lookup never hands out such an entry meanwhile (it
 * replaces it).
 *
 * <p>Thread-safe.
 */
public final class LocalMemorySweeper implements AutoCloseable {

    /** The delay of a sweep after a cache gained an entry, or after a sweep that dropped something. */
    public static final Duration FIRST = Duration.ofSeconds(1);
    /** The longest delay between two sweeps while entries are cached. */
    public static final Duration LONGEST = Duration.ofSeconds(32);

    private final List<LocalMemoryCache> caches;
    private final Watchdog watchdog;
    private Watchdog.Guard next;
    /** The delay the scheduled sweep was armed with, or -1 when none is scheduled. */
    private long delayNanos = -1;
    private long scheduled;
    private boolean sweeping;
    private boolean closed;

    /**
     * Sweeps {@code caches} on {@code watchdog} as the caches gain entries (it listens to them).
     *
     * @param caches   the caches of the manager's transports that prepare local memory (may be none)
     * @param watchdog the manager's watchdog; this must be closed before it
     */
    public LocalMemorySweeper(List<LocalMemoryCache> caches, Watchdog watchdog) {
        this.caches = List.copyOf(caches);
        this.watchdog = watchdog;
        for (LocalMemoryCache c : this.caches) {
            c.onEntryAdded(this::entryAdded);
        }
    }

    /** A cache gained an entry: a sweep within {@link #FIRST}. */
    private synchronized void entryAdded() {
        if (!closed && (delayNanos < 0 || delayNanos > FIRST.toNanos())) {
            schedule(FIRST.toNanos());
        }
    }

    /**
     * Sweeps every cache now and schedules the next sweep (or none, when nothing is cached).
     *
     * @return how many preparations it dropped
     */
    public synchronized int sweepNow() {
        if (sweeping) {
            return 0;       // a closed watchdog runs what is armed at once, inside arm(): no recursion
        }
        sweeping = true;
        try {
            int dropped = 0;
            long left = 0;
            for (LocalMemoryCache c : caches) {
                dropped += c.sweep();
                left += c.size();
            }
            if (closed) {
                return dropped;
            }
            if (left == 0) {
                unschedule();
            } else {
                schedule(dropped > 0 || delayNanos < 0 ? FIRST.toNanos() : Math.min(2 * delayNanos, LONGEST.toNanos()));
            }
            return dropped;
        } finally {
            sweeping = false;
        }
    }

    private void schedule(long nanos) {
        unschedule();
        delayNanos = nanos;
        scheduled++;
        next = watchdog.arm(nanos, this::sweepNow);
    }

    private void unschedule() {
        if (next != null) {
            next.disarm();
            next = null;
        }
        delayNanos = -1;
    }

    /**
     * The delay the next sweep was scheduled with.
     *
     * @return the delay, or {@code null} when no sweep is scheduled
     */
    public synchronized Duration nextDelay() {
        return delayNanos < 0 ? null : Duration.ofNanos(delayNanos);
    }

    /**
     * How many sweeps were scheduled so far (each a watchdog wake-up, unless replaced before it came).
     *
     * @return the count, since construction
     */
    public synchronized long scheduledCount() {
        return scheduled;
    }

    /** Schedules no more sweeps and cancels the scheduled one. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        unschedule();
    }
}
