package io.rdma4j.transport.shm;

import io.rdma4j.spi.Watchdog;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * The owner's watch of registrations whose arena may close without release (caller memory,
 * slices): while holders copy, it looks at their arenas every {@value #WATCH_MILLIS} ms and
 * withdraws a closed one from the {@link AccessTable}; once holders stop copying it goes dormant,
 * and a holder about to copy such a buffer wakes it first. {@link ShmTransport} ("Arenas closed
 * without release") says what is promised.
 *
 * <p>Threading: looks run on the manager's watchdog thread, {@link #awaken} on the hand-over
 * thread, {@link #add}/{@link #remove} on the registration thread; looks, wake-ups and
 * {@link #closeTable} exclude each other by one lock.
 */
final class ArenaWatch {

    /** Logged under {@link ShmTransport}'s name, as the transport's other lines. */
    private static final System.Logger LOG = System.getLogger(ShmTransport.class.getName());

    /**
     * How often the watched registrations' arenas are looked at while holders copy, in ms: the
     * window in which a misused (closed, not released) segment may still be copied, against the
     * owner's cost (every look wakes the watchdog: at one tick, 10 ms, an idle manager spent 0.55%
     * of a core on it, half the budget of an idle manager; at 100 ms, on a virtual machine that
     * charged 1 to 2 ms of CPU to every timer wake-up, 1.1% of a core, and at 250 ms still 0.9%: the
     * whole budget). Once holders stop copying, the owner stops looking ({@link #withdrawClosed}).
     */
    static final long WATCH_MILLIS = 1000;
    private static final long WATCH_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(WATCH_MILLIS);

    private final AccessTable table;
    private final Watchdog watchdog;
    /** Whether the transport is closed (or closing): no more looks. */
    private final BooleanSupplier closed;
    /** Registrations whose arena may close without release (caller memory, slices): id -> published. */
    private final ConcurrentHashMap<Long, ShmTransport.Published> watched = new ConcurrentHashMap<>();
    /** Whether a watch of {@link #watched} is armed on the manager's watchdog. */
    private final AtomicBoolean watching = new AtomicBoolean();
    private final Object watchLock = new Object();
    /** The holders' copy count at the last look ({@link AccessTable#entries}); guarded by {@link #watchLock}. */
    private long lastEntries = -1;

    ArenaWatch(AccessTable table, Watchdog watchdog, BooleanSupplier closed) {
        this.table = table;
        this.watchdog = watchdog;
        this.closed = closed;
    }

    /** Watches registration {@code bufferId}: looked at once a holder is granted it. */
    void add(long bufferId, ShmTransport.Published p) {
        watched.put(bufferId, p);
    }

    /** Stops watching registration {@code bufferId} (released). */
    void remove(long bufferId) {
        watched.remove(bufferId);
    }

    /** Arms the next look at the watched registrations, {@value #WATCH_MILLIS} ms from now, unless one is armed. */
    private void watch() {
        if (!closed.getAsBoolean() && watching.compareAndSet(false, true)) {
            watchdog.arm(WATCH_NANOS, this::withdrawClosed);
        }
    }

    /**
     * A look, on the watchdog's thread: withdraws from the access table every watched registration
     * whose arena was closed without release, so that holders' next ops are refused (asked, the
     * owner then says why: the arena was closed, as TCP says), and looks again in
     * {@value #WATCH_MILLIS} ms while holders copy. When no holder began a copy since the last look
     * ({@link AccessTable#entries}), the owner goes dormant instead: it sets the table's dormant flag
     * first, then looks, and plans no next look; a holder about to copy a watched buffer then wakes
     * it first ({@link #awaken}). So an idle owner does not wake for its watched buffers, and a
     * copy that starts {@value #WATCH_MILLIS} ms or more after a close is still refused: either the
     * owner was awake and looked since the close, or the holder woke it and it looked then.
     * Excludes {@link #closeTable()}'s unmapping of the table by {@link #watchLock}.
     */
    private void withdrawClosed() {
        synchronized (watchLock) {
            watching.set(false);
            if (closed.getAsBoolean() || watched.isEmpty()) {
                return;
            }
            long entries = table.entries();
            boolean quiet = entries == lastEntries;
            lastEntries = entries;
            if (quiet) {
                table.setDormant(true);     // first: a holder that still finds the owner awake announced its copy before this look
            }
            withdrawClosedLocked();
            if (!quiet) {
                watch();
            }
        }
    }

    /**
     * On the hand-over thread, before a grant: wakes a dormant owner (or starts the first look):
     * looks at every watched registration now, clears the dormant flag, and looks again in
     * {@value #WATCH_MILLIS} ms. Nothing when nothing is watched or the looks go on already.
     */
    void awaken() {
        synchronized (watchLock) {
            if (closed.getAsBoolean() || watched.isEmpty() || (watching.get() && !table.isDormant())) {
                return;
            }
            withdrawClosedLocked();         // closes while dormant: withdrawn before a holder finds the owner awake again
            table.setDormant(false);
            lastEntries = table.entries();
            watch();
        }
    }

    /** Whether the owner stopped looking at its watched registrations until a holder wakes it (for tests). */
    boolean isDormant() {
        synchronized (watchLock) {
            return !closed.getAsBoolean() && table.isDormant() && !watching.get();
        }
    }

    private void withdrawClosedLocked() {
        for (var e : watched.entrySet()) {
            ShmTransport.Published p = e.getValue();
            if (!p.segment().scope().isAlive()) {
                watched.remove(e.getKey(), p);
                if (table.withdraw(p.slot())) {
                    LOG.log(System.Logger.Level.DEBUG, "shm: buffer {0}: the owner closed the arena of its memory "
                            + "without releasing it first; same-host holders are refused from now on", e.getKey());
                }
            }
        }
    }

    /** Closes the access table once a look in progress ended: the transport's last use of it. */
    void closeTable() {
        synchronized (watchLock) {      // a look at the watched arenas in progress ends first
            table.close();
        }
    }
}
