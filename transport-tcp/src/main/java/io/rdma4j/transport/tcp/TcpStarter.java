package io.rdma4j.transport.tcp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Decides when a submit's pool thread starts: at once, or only if nobody joins the submit.
 *
 * <p>A submit's ops run on the first thread that claims them: the pool thread started for them,
 * or a thread that waits for the future and {@linkplain TcpSubmission#runOnJoin() runs} them itself
 * (the manager's {@code join()}). Starting the pool thread wakes it, and on a busy or single vCPU
 * that wake-up costs a thread switch per op even when the caller then joins at once, and often
 * the woken thread wins the claim so that the caller waits to be woken in turn. So a submit from a
 * thread whose last {@value #STREAK} submits were each joined within {@value #JOIN_WINDOW_MICROS} us
 * is <em>deferred</em>: no thread is woken for it, its joiner is expected to run it.
 *
 * <p>A deferred submit that nobody claims still starts. When its thread submits again and it is
 * still unclaimed, that submit starts it on a pool thread at once (and itself starts at once: the
 * thread did not join). Otherwise a starter thread looks at the deferred submits, first
 * {@value #POLL_MICROS} us after a deferral and then twice as long each time it found nothing to
 * start, up to every {@value #MAX_POLL_MICROS} us, and starts on a pool thread each one that
 * waited {@value #DEFER_MICROS} us unclaimed. It ends after {@value #LINGER_MILLIS} ms without a
 * deferral, and the next one starts it again. So while a thread joins at once, the starter wakes
 * about a hundred times a second instead of a pool thread once per submit (each wake-up of another
 * thread on a busy vCPU can cost an op a scheduler slice, about a millisecond, measured with
 * {@code rdma-perf} on one vCPU); and a thread that stops joining pays once: until its next
 * submit, or at most about {@value #MAX_POLL_MICROS} us when it submits no more. A thread that
 * submits several times before joining (a pipeline) never defers.
 */
final class TcpStarter {

    static final int STREAK = 2;
    static final long JOIN_WINDOW_MICROS = 50;
    static final long DEFER_MICROS = 50;
    static final long POLL_MICROS = 200;
    static final long MAX_POLL_MICROS = 10_000;
    static final long LINGER_MILLIS = 20;


    /** Per submitting thread, whether its recent submits were joined at once; shared by every transport. */
    private static final ThreadLocal<Habit> HABITS = ThreadLocal.withInitial(Habit::new);

    private static final int IDLE = 0;
    private static final int POLLING = 1;
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(TcpStarter.class, "state", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final TcpThreads threads;
    private final Consumer<TcpSubmission> startOnPool;
    private final long joinWindowNanos;
    private final long deferNanos;
    private final long pollNanos;
    private final long maxPollNanos;
    private final long lingerNanos;
    private final ConcurrentLinkedQueue<TcpSubmission> deferred = new ConcurrentLinkedQueue<>();
    /** {@link #IDLE}, or {@link #POLLING} while a starter thread runs. */
    @SuppressWarnings("unused") // through STATE
    private volatile int state;
    private volatile long lastDeferNanos;
    private volatile boolean closed;
    /** The starter thread while it polls, so that {@link #close()} can wake it. */
    private volatile Thread polling;

    /**
     * @param startOnPool starts a submit on a pool thread, or fails it when that is impossible
     */
    TcpStarter(TcpThreads threads, Consumer<TcpSubmission> startOnPool) {
        this(threads, startOnPool, TimeUnit.MICROSECONDS.toNanos(JOIN_WINDOW_MICROS),
                TimeUnit.MICROSECONDS.toNanos(DEFER_MICROS), TimeUnit.MICROSECONDS.toNanos(POLL_MICROS),
                TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS));
    }

    /** With other times (tests: a join window and a deferral that no scheduling delay can miss). */
    TcpStarter(TcpThreads threads, Consumer<TcpSubmission> startOnPool, long joinWindowNanos, long deferNanos,
               long pollNanos, long lingerNanos) {
        this.threads = threads;
        this.startOnPool = startOnPool;
        this.joinWindowNanos = joinWindowNanos;
        this.deferNanos = deferNanos;
        this.pollNanos = pollNanos;
        this.maxPollNanos = Math.max(pollNanos, TimeUnit.MICROSECONDS.toNanos(MAX_POLL_MICROS));
        this.lingerNanos = lingerNanos;
    }

    /** What one thread's submits showed: numbered, and the last one joined at once. */
    static final class Habit {
        private long lastSeq;
        private int joinedInARow;
        private volatile long joinedSeq = -1;
        /** The thread's last deferred submit until a thread claims it; {@code null} otherwise. */
        private volatile TcpSubmission deferred;

        /** {@code s} was claimed or started: the habit no longer holds it (nor its ops' memory). */
        void release(TcpSubmission s) {
            if (deferred == s) {
                deferred = null;
            }
        }

        /** A thread waited for submit {@code seq} of this habit; it counts when that was before {@code joinByNanos}. */
        void joined(long seq, long joinByNanos) {
            if (System.nanoTime() - joinByNanos <= 0 && seq > joinedSeq) {
                joinedSeq = seq;
            }
        }
    }

    /**
     * Starts {@code submission} on a pool thread, or defers it when the calling thread's habit says
     * it will join it at once. Either way the submit runs, and its future completes, once.
     */
    void start(TcpSubmission submission) {
        Habit habit = HABITS.get();
        TcpSubmission unjoined = habit.deferred;
        if (unjoined != null) {
            habit.deferred = null;
            // this thread went on without joining it; unless the starter thread took it off the queue
            // first (and starts it), it starts here, once: the queue no longer holds it for close() either
            if (!unjoined.isClaimed() && !unjoined.isDone() && deferred.remove(unjoined)) {
                startOnPool.accept(unjoined);
            }
        }
        long seq = ++habit.lastSeq;
        habit.joinedInARow = habit.joinedSeq == seq - 1 ? habit.joinedInARow + 1 : 0;
        long now = System.nanoTime();
        submission.expectJoin(habit, seq, now, now + joinWindowNanos);
        if (habit.joinedInARow < STREAK || closed) {
            startOnPool.accept(submission);
            return;
        }
        lastDeferNanos = now;
        habit.deferred = submission;
        deferred.add(submission);
        if (state == IDLE && STATE.compareAndSet(this, IDLE, POLLING)) {
            try {
                threads.start("rdma4j-tcp-starter", this::poll, TcpThreads.IGNORE);
            } catch (RuntimeException | OutOfMemoryError e) {
                state = IDLE;
                if (deferred.remove(submission)) {
                    startOnPool.accept(submission); // fails it with the reason when no thread starts
                }
            }
        }
    }

    /** The starter thread: starts deferred submits nobody claimed in time, until none came for a while. */
    private void poll() {
        polling = Thread.currentThread();
        long wait = pollNanos;
        while (!closed) {
            LockSupport.parkNanos(this, wait);
            long now = System.nanoTime();
            wait = Math.min(2 * wait, maxPollNanos);
            TcpSubmission s;
            // Each look removes the submit it looked at, not whatever heads the queue by then: its
            // thread's next submit may have taken it off meanwhile (and started it), and a poll()
            // would drop the submit behind it unstarted.
            while ((s = deferred.peek()) != null) {
                if (s.isClaimed() || s.isDone()) {
                    deferred.remove(s); // its joiner took it
                } else if (now - s.submitNanos() >= deferNanos) {
                    if (deferred.remove(s)) {       // else its thread's next submit started it
                        s.leaveHabit(); // its thread's next submit need not start it
                        startOnPool.accept(s); // the pool thread claims it unless a joiner does first
                    }
                    wait = pollNanos;
                } else {
                    wait = pollNanos; // look again soon: it may need starting
                    break; // the ones behind were deferred later
                }
            }
            if (deferred.isEmpty() && now - lastDeferNanos >= lingerNanos) {
                polling = null; // before IDLE: a new starter may set it right after
                state = IDLE;
                // a deferral after this write sees IDLE and starts a new starter; one before it is in the queue
                if (deferred.isEmpty() || !STATE.compareAndSet(this, IDLE, POLLING)) {
                    return;
                }
                polling = Thread.currentThread();
            }
        }
        polling = null;
        TcpSubmission s;
        while ((s = deferred.poll()) != null) {
            s.leaveHabit();
            startOnPool.accept(s); // the transport is closing: this fails them at once
        }
    }

    /** No more deferrals; the starter thread starts what is left (which fails) and ends at once. Idempotent. */
    void close() {
        closed = true;
        Thread t = polling;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }
}
