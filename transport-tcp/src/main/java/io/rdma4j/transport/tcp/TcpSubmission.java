package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.RunOnJoin;
import io.rdma4j.spi.TransportOp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The future of one submit, and what stops its transfers: the connections its workers are
 * exchanging on right now.
 *
 * <p>The guarantee it gives: once {@link #abort()} returned, and so once {@link #cancel} or
 * {@link #completeExceptionally} returned, no worker of this submit is inside an exchange, and none starts one, so no byte reaches the
 * caller's local memory any more. Closing a blocking channel wakes a thread blocked on it but does
 * not wait for it to leave the system call, so {@code abort()} waits for every exchange to end
 * (each ends promptly: its connection is closed under it).
 *
 * <p>Its ops run on whichever thread {@linkplain #claim() claims} them first: the pool thread the
 * transport starts for them, or a thread that waits for the future and {@linkplain #runOnJoin() runs}
 * them itself.
 *
 * <p>Workers bracket each exchange with {@link #enter} and {@link #exit}; a connection that was
 * inside an exchange when the submit was aborted is closed, so its worker discards it. Each worker
 * of a transfer has its own slot (at most {@code rdma.tcp.parallelism} work at once), so bracketing
 * an exchange is two volatile writes, with no set to allocate or hash into per submit.
 */
final class TcpSubmission extends CompletableFuture<Void> implements RunOnJoin {

    private static final long RECHECK_MILLIS = 10;

    /** What runs the submit's ops on the calling thread and then completes the future. */
    @FunctionalInterface
    interface Work {
        void run(TcpSubmission submission);
    }

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(TcpConnection[].class);

    /** Per worker, the connection it is exchanging on now, or {@code null}; also the monitor {@link #abort()} waits on. */
    private final TcpConnection[] exchanging;
    private final List<TransportOp> ops;
    private final Deadline deadline;
    private final long budgetNanos;
    private final Work work;
    private final int hash;
    private final AtomicReference<Thread> runner = new AtomicReference<>();
    private volatile boolean aborted;
    /** The round this submit has in flight on a shared connection ({@link TcpMux}), or null. */
    private volatile TcpMuxRound muxRound;
    /** The submitting thread's habit, when the submit came through {@link TcpStarter}; {@code null} otherwise. */
    private TcpStarter.Habit habit;
    private long seq;
    private long submitNanos;
    private long joinByNanos;

    /**
     * @param ops      the submit's ops, immutable
     * @param deadline when they must have finished
     * @param budgetNanos the time they had at submit, in nanoseconds (for messages)
     * @param work     runs them on the calling thread, which claimed them, and completes this future
     * @param workers  how many workers one of its transfers may run at once (numbered from 0)
     */
    TcpSubmission(List<TransportOp> ops, Deadline deadline, long budgetNanos, Work work, int workers) {
        this.exchanging = new TcpConnection[workers];
        this.ops = ops;
        this.deadline = deadline;
        this.budgetNanos = budgetNanos;
        this.hash = ThreadLocalRandom.current().nextInt();
        this.work = work;
    }

    List<TransportOp> ops() {
        return ops;
    }

    Deadline deadline() {
        return deadline;
    }

    long budgetNanos() {
        return budgetNanos;
    }

    /** Spreads submits over the transport's in-flight set; equality stays identity. */
    @Override
    public int hashCode() {
        return hash; // the identity hash would cost its first use on every submit
    }

    @Override
    public boolean equals(Object o) {
        return this == o;
    }

    /**
     * Notes, before the submit is started or deferred, which thread's habit it belongs to: a
     * thread that waits for it within the join window ({@link #runOnJoin()}) counts for that habit.
     */
    void expectJoin(TcpStarter.Habit habit, long seq, long submitNanos, long joinByNanos) {
        this.habit = habit;
        this.seq = seq;
        this.submitNanos = submitNanos;
        this.joinByNanos = joinByNanos;
    }

    long submitNanos() {
        return submitNanos;
    }

    /** Whether a thread claimed the ops. */
    boolean isClaimed() {
        return runner.get() != null;
    }

    /**
     * Takes the submit's ops for the calling thread: true for the first thread that asks, which
     * must then run them; false for every other.
     */
    boolean claim() {
        if (!runner.compareAndSet(null, Thread.currentThread())) {
            return false;
        }
        leaveHabit();
        return true;
    }

    /** Lets the submitting thread's habit forget this submit: it was claimed, or started on the pool. */
    void leaveHabit() {
        TcpStarter.Habit h = habit;
        if (h != null) {
            h.release(this);
        }
    }

    /** Whether {@code thread} claimed the ops. */
    boolean claimedBy(Thread thread) {
        return runner.get() == thread;
    }

    /**
     * Runs the submit's ops on the calling thread and completes this future, unless another
     * thread claimed them first (or the future is done): then returns at once, without waiting for
     * that thread. A thread about to wait for the future calls it (the manager's {@code join()}
     * does), so that a transfer nobody started yet needs no hand-off to a pool thread and back. The
     * call counts as a join for the submitting thread's habit ({@link TcpStarter}), done or not.
     */
    @Override
    public void runOnJoin() {
        TcpStarter.Habit h = habit;
        if (h != null) {
            h.joined(seq, joinByNanos);
        }
        if (!isDone() && claim()) {
            work.run(this);
        }
    }

    /**
     * Registers an exchange about to start on {@code connection}, by worker {@code worker} (each
     * worker of a transfer has its own number, below the {@code workers} given at construction).
     *
     * @throws ClosedChannelException when the submit was aborted: the exchange must not start (the
     *                                connection is closed)
     */
    void enter(int worker, TcpConnection connection) throws ClosedChannelException {
        SLOT.setVolatile(exchanging, worker, connection);
        // abort() sets the flag before it looks at the slots: one of the two sees the other.
        if (aborted) {
            exit(worker);
            connection.close();
            throw new ClosedChannelException();
        }
    }

    /** Worker {@code worker}'s exchange ended, normally or not. */
    void exit(int worker) {
        SLOT.setVolatile(exchanging, worker, null);
        // Volatile both: either abort() sees the empty slot, or this sees the flag and wakes it.
        if (aborted) {
            synchronized (exchanging) {
                exchanging.notifyAll();
            }
        }
    }

    /**
     * Registers a round about to be written on a shared connection (its state is BUSY until its
     * requests are built).
     *
     * @return false when the submit was aborted: the round must not be written
     */
    boolean enterRound(TcpMuxRound round) {
        muxRound = round;
        // abort() sets the flag before it looks at the round: one of the two sees the other.
        return !aborted;
    }

    /** The round registered by {@link #enterRound} ended. */
    void exitRound() {
        muxRound = null;
    }

    /** Whether {@link #abort()} was called: workers stop taking chunks and ops. */
    boolean isAborted() {
        return aborted;
    }

    /**
     * Stops every transfer of this submit: closes the connections in use and waits until no worker
     * is inside an exchange any more; a round on a shared connection is abandoned instead (its
     * replies are read and discarded; the connection goes on serving other submits). Idempotent;
     * returns at once when nothing is running.
     */
    void abort() {
        aborted = true;
        TcpMuxRound round = muxRound;
        if (round != null) {
            round.abandon(); // after it, the shared connection's reader leaves the round's memory alone
        }
        boolean interrupted = false;
        synchronized (exchanging) {
            while (closeExchanging()) {
                // Again on every round: a worker that entered meanwhile is closed next time.
                try {
                    exchanging.wait(RECHECK_MILLIS);
                } catch (InterruptedException e) {
                    interrupted = true; // finish the wait: the guarantee matters more
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes the connection of every exchange in progress; false when there is none. */
    private boolean closeExchanging() {
        boolean any = false;
        for (int w = 0; w < exchanging.length; w++) {
            TcpConnection c = (TcpConnection) SLOT.getVolatile(exchanging, w);
            if (c != null) {
                c.close();
                any = true;
            }
        }
        return any;
    }

    /**
     * Completes the future with the submit's outcome ({@code failure} or, when {@code null},
     * success), unless the submit was aborted: then whoever aborted it completes it.
     */
    void finish(Throwable failure) {
        if (aborted) {
            return;
        }
        if (failure == null) {
            complete(null);
        } else {
            super.completeExceptionally(failure); // the transfers already ended
        }
    }

    /**
     * Stops the submit's transfers (see {@link #abort()}) unless it already ended, then completes
     * this future with {@code failure}. Whoever completes the future (the manager's watchdog, for
     * one) thereby stops the transfers: nothing writes into the caller's memory afterwards.
     */
    @Override
    public boolean completeExceptionally(Throwable failure) {
        if (!isDone()) {
            abort();
        }
        return super.completeExceptionally(failure);
    }

    /**
     * Stops the submit's transfers (see {@link #abort()}), closing their connections, then
     * completes this future as cancelled.
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (isDone()) {
            return isCancelled();
        }
        abort();
        return super.cancel(mayInterruptIfRunning);
    }
}
