package io.rdma4j.transport.ibverbs.device;

import java.util.concurrent.TimeUnit;

/**
 * How long one device's completion queue is polled on an empty queue after the last completion
 * taken from it: by its poller before it sleeps on the completion channel, and by a thread
 * waiting for its ops before it sleeps until the poller completes them.
 *
 * <p>That is the busy-poll window ({@code rdma.ibverbs.busyPollWindow}), or longer when this
 * device's ops typically take longer than half the window but at most {@link #CAP_NANOS}: then
 * twice their typical time, at most {@link #CAP_NANOS}. Polling that stops just before a
 * completion arrives costs two thread wakeups for it (the poller's, on the completion event, then
 * the waiting thread's), which on a slow fabric (soft-RoCE, a long link) is a large part of a
 * small op's time. Ops that typically take longer than the cap (large transfers) are not waited
 * for by spinning: the window stays the busy-poll window. With the window {@code 0}, nothing spins.
 *
 * <p>The typical time is a moving average of the times of this device's recent submissions that
 * succeeded, from submit to completion ({@link #observe}); each time is clamped to twice the cap,
 * so that one slow op (the first to a peer waits for the queue-pair handshake) moves it only a
 * little. An idle device still costs no CPU: its poller sleeps once the window passed after the
 * last completion (the longer of the cap and the busy-poll window at most). While a waiting
 * thread polls, the poller rests ({@link VerbsDevice}), and only one waiting thread polls a device
 * at a time, so one device spins one thread at a time.
 *
 * <p>A thread waiting for a submission of several completions (more ops than one completion
 * stands for) polls for {@link #waiterNanos}: that window, or longer when
 * completions of this busy device typically come further apart: then twice the typical gap
 * between two takes of completions while work was in flight ({@link #observeGap}), at most
 * {@link #CAP_NANOS}. An action of many small ops takes longer than the cap as a whole (64 writes
 * of 8 bytes in the soft-RoCE VM: several milliseconds), but its completions come a few hundred
 * microseconds apart: sized from the action's whole time the window fell back to the busy-poll
 * window, and the waiting thread stopped polling between two of its completions; the rest then
 * came through a completion event, the poller's wake-up and an unpark of the waiting thread.
 * Sized from the gap, it polls through its action. The typical gap rises quickly (half the way to
 * a longer gap) and falls slowly (an eighth of the way to a shorter one): the window is meant to
 * cover the longer gaps too. Devices whose completions come more than the cap apart (large
 * transfers) keep the window above. The poller keeps it too: while a waiting thread polls, the
 * poller rests.
 *
 * <p>Thread-safe: concurrent observations may overwrite each other, which an estimate tolerates.
 */
public final class PollWindow {

    /** The longest the window grows to with the ops' typical time (it is never shorter than the busy-poll window). */
    static final long CAP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Each observation moves the typical time by 1/2^SHIFT of its distance from it. */
    private static final int SHIFT = 3;

    private final long busyPollNanos;
    /** The moving average of recent ops' times, in nanoseconds; 0 until the first. */
    private volatile long typicalNanos;
    /** The typical gap between two takes of completions while work was in flight, in nanoseconds; 0 until the first. */
    private volatile long gapNanos;

    PollWindow(long busyPollNanos) {
        if (busyPollNanos < 0) {
            throw new IllegalArgumentException("busy-poll window " + busyPollNanos + " ns is negative");
        }
        this.busyPollNanos = busyPollNanos;
    }

    /** Notes that a submission on this device completed {@code nanos} after it was submitted. */
    public void observe(long nanos) {
        long sample = Math.clamp(nanos, 0, 2 * CAP_NANOS);
        long typical = typicalNanos;
        typicalNanos = typical == 0 ? Math.max(sample, 1) : typical + ((sample - typical) >> SHIFT);
    }

    /** How long to poll an empty queue now, after the last completion taken from it, before sleeping. */
    public long nanos() {
        long typical = typicalNanos;
        if (busyPollNanos == 0 || typical > CAP_NANOS) {
            return busyPollNanos;
        }
        return Math.max(busyPollNanos, Math.min(2 * typical, CAP_NANOS));
    }

    /**
     * Notes that completions were taken {@code nanos} after the take before, which left work in
     * flight. Each gap is clamped to twice the cap.
     */
    public void observeGap(long nanos) {
        long sample = Math.clamp(nanos, 0, 2 * CAP_NANOS);
        long gap = gapNanos;
        gapNanos = gap == 0 ? Math.max(sample, 1)
                : sample > gap ? gap + ((sample - gap) >> 1) : gap + ((sample - gap) >> SHIFT);
    }

    /**
     * How long a thread waiting for its ops polls an empty queue after the last completion it took,
     * before it sleeps until the poller completes them: {@link #nanos}, or twice the typical gap
     * between completions when that is longer and the gap is at most {@link #CAP_NANOS}; at most
     * the cap (or the busy-poll window, when that is longer). {@code 0} when busy-polling is off.
     */
    public long waiterNanos() {
        long window = nanos();
        long gap = gapNanos;
        if (busyPollNanos == 0 || gap > CAP_NANOS) {
            return window;
        }
        return Math.max(window, Math.min(2 * gap, CAP_NANOS));
    }

    /** The typical gap between takes of completions while work was in flight, in nanoseconds; 0 before the first (for tests and diagnostics). */
    public long gapNanos() {
        return gapNanos;
    }

    /** The moving average of recent submissions' times, in nanoseconds; 0 before the first. */
    long typicalNanos() {
        return typicalNanos;
    }
}
