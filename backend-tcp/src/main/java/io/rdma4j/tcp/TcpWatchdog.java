package io.rdma4j.tcp;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Bounds blocking socket I/O in time: {@link #arm} schedules an action (closing a channel) for
 * a moment; closing a channel wakes any thread blocked on it with an exception. One daemon
 * platform thread per backend, named {@code rdma4j-tcp-watchdog-<port>}; cancelled tasks leave the
 * queue at once.
 */
final class TcpWatchdog implements AutoCloseable {

    private final ScheduledThreadPoolExecutor timer;

    TcpWatchdog(String threadName) {
        timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
        timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /**
     * Runs {@code onExpiry} after {@code delayNanos} unless the returned guard is closed first.
     * After {@link #close()} the action runs at once: nothing may outlive the watchdog unbounded.
     */
    Guard arm(Runnable onExpiry, long delayNanos) {
        try {
            return new Guard(timer.schedule(onExpiry, Math.max(0, delayNanos), TimeUnit.NANOSECONDS));
        } catch (RejectedExecutionException shutDown) {
            onExpiry.run();
            return new Guard(null);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    /** A scheduled action; close it when the guarded I/O finished. */
    static final class Guard implements AutoCloseable {
        private final ScheduledFuture<?> task;

        private Guard(ScheduledFuture<?> task) {
            this.task = task;
        }

        /** Cancels the action; idempotent. */
        @Override
        public void close() {
            disarm();
        }

        /**
         * Cancels the action.
         *
         * @return true when it was cancelled in time; false when it ran or is running (for a
         *         connection: it is being closed, so it must not be reused)
         */
        boolean disarm() {
            return task != null && (task.cancel(false) || task.isCancelled());
        }
    }
}
