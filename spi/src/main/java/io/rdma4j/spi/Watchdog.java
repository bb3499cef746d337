package io.rdma4j.spi;

/**
 * Runs an action when a deadline passes unless it was disarmed first: the way for a transport to
 * bound blocking I/O in time (the action closes the channel, which wakes the blocked thread), and
 * to plan work for later (a sweep, a retry). The manager owns the one instance of a manager and its
 * transports ({@link TransportContext#watchdog()}), its thread and its close; a transport only arms
 * and disarms.
 *
 * <p>Built for the data path, where a guard is armed and disarmed around every op: both are cheap
 * and wake no thread in the common case. The price is precision: an action runs up to
 * {@value #TICK_MILLIS} ms late.
 *
 * <p>Actions run on the watchdog's thread and must be short and must not throw (a throw is logged
 * and changes nothing else). Once the manager closed the watchdog (after its transports),
 * {@link #arm} runs the action at once: nothing outlives the watchdog unbounded.
 *
 * <p>Thread-safe.
 */
public interface Watchdog {

    /** How late an action may run after its deadline: the watchdog looks this often while guards are armed. */
    long TICK_MILLIS = 10;

    /**
     * Runs {@code onExpiry} once {@code deadline} has passed, unless the guard is disarmed first.
     *
     * @param deadline when the action runs, up to {@value #TICK_MILLIS} ms late
     * @param onExpiry the action; runs on the watchdog's thread, must be short and must not throw
     * @return the guard; close or disarm it when the guarded work finished
     */
    Guard arm(Deadline deadline, Runnable onExpiry);

    /**
     * Runs {@code onExpiry} after {@code delayNanos}, unless the guard is disarmed first.
     *
     * @param delayNanos the delay from now, in nanoseconds; a negative one counts as zero
     * @param onExpiry   the action; runs on the watchdog's thread, must be short and must not throw
     * @return the guard; close or disarm it when the guarded work finished
     */
    Guard arm(long delayNanos, Runnable onExpiry);

    /** One armed action. Thread-safe. */
    interface Guard extends AutoCloseable {

        /**
         * Cancels the action.
         *
         * @return true if it will never run; false if it ran or is running
         */
        boolean disarm();

        /**
         * Whether the action ran (or is running).
         *
         * @return {@code true} once the action started
         */
        boolean fired();

        /** Same as {@link #disarm()}. */
        @Override
        default void close() {
            disarm();
        }
    }
}
