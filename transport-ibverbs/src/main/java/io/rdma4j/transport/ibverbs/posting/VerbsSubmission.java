package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.VerbsTransport;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.Watchdog;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * One {@code submit}: its chunks across connections, and the future the manager holds.
 *
 * <p><b>No late DMA.</b> The future completes only when the device can touch none of the
 * caller's memory any more: every chunk is accounted for (completed, flushed or never posted), or
 * the queue pair that carried it was destroyed. A timeout or a cancel aborts: every connection
 * with chunks of this submission in flight is moved to ERROR, which flushes them. On the
 * submission's own deadline the future completes once the flush arrived. Completing the future
 * from outside ({@code cancel}, {@code completeExceptionally} as the manager's watchdog does,
 * {@code complete}, {@code obtrude*}: {@link SubmissionFuture}) aborts the same way and returns
 * only after the flush, in the calling thread ({@link #stopFromOutside}), before the future
 * completes and before any dependent stage runs: that thread polls the completion queues itself while it waits, so it may
 * be the device's poller (a dependent stage of another op) or a thread polling as a waiter. Where
 * the flush has not arrived within {@code flushBoundNanos}, the queue pairs that carry the
 * submission's chunks are destroyed ({@link VerbsConnection#destroyNow}): once
 * {@code ibv_destroy_qp} returned, the device touches none of their memory, and their chunks are
 * accounted for as flushed. There is no timed give-up that lets the future complete earlier. A
 * thread that stops a submission from inside a delivery (a dependent stage the poller runs) first
 * delivers the rest of the completions its outer frames took off the queue (VerbsDevice.pollOnce),
 * so a flush or completion already taken does not wait out the bound.
 *
 * <p><b>No collateral failures.</b> Moving a queue pair to ERROR flushes the work requests of
 * every submission on it. Those of other submissions are posted again, on a replacement queue pair
 * of the same lane ({@link #collateral}), unless their own submission is aborted meanwhile (its
 * deadline, a cancel): an RDMA READ or WRITE of memory the caller does not change while its op
 * runs can be repeated. A failure that is not another submission's abort (an op's own error, the
 * peer gone) still fails every op on the queue pair.
 *
 * <p>Errors: the first real error (not a flush that an earlier error caused) is reported with the
 * work-completion status text, and with "k of n ops failed" when several ops were submitted. The
 * ops to one queue pair go as chains of work requests of which only some ask for a completion
 * ({@link VerbsConnection}); the rest are inferred. A failing work request reports itself whether
 * it asked or not, so the first real error is always its own, and the ops posted before it on its
 * queue pair count as done: k is exact for the ops of one queue pair. Ops of another queue pair of
 * the same submission, flushed when this error took it out of service, count as failed unless
 * their own completion said done before: one that was done but never said so counts as failed
 * (k may count it), never the reverse. A
 * chunk flushed or refused on a queue pair retired because its peer is gone (the liveness sweep's
 * proof, or another incarnation at the peer's endpoint) fails as unreachable, as one whose
 * transport retries ran out does.
 *
 * <p>The future ({@link SubmissionFuture}) implements {@code RunOnJoin}: a thread about to wait
 * for it polls the devices' completion queues itself for up to their {@code PollWindow}. A
 * submission that succeeds tells its devices' windows how long it took.
 */
public final class VerbsSubmission {

    /** How long an abort waits for the flush of what it aborted before it destroys the queue pairs instead. */
    public static final long FLUSH_BOUND_NANOS = 2_000_000_000L;
    private static final System.Logger LOG = System.getLogger(VerbsSubmission.class.getName());

    /** The manager's future ({@link SubmissionFuture}): completed from outside, it stops this submission first. */
    public final SubmissionFuture future;
    /** Completed once every chunk is accounted for; the future completes after it, never before. */
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private final VerbsDevice[] devices;
    private final Watchdog watchdog;
    private final long flushBoundNanos;
    /** Chunks waiting for a replacement connection ({@link #collateral}): in flight nowhere; an abort accounts for them. Guarded by this. */
    private final Set<Chunk> reposting = new HashSet<>();
    /** A connection for a chunk's lane in place of its broken one ({@link #collateral}). */
    private final Function<Chunk, CompletableFuture<VerbsConnection>> replacement;
    private final long startNanos = System.nanoTime();
    private final int opCount;
    /** The connections carrying chunks of this submission (usually one); guarded by this. */
    private VerbsConnection connection;
    private Set<VerbsConnection> moreConnections;
    private final BitSet failedOps = new BitSet();
    private int remaining;                // chunks counted by expect() and not yet accounted for
    private boolean counted;
    private boolean finished;
    private TransportException firstError;
    private TransportException flushError;
    private volatile boolean aborted;
    private volatile Watchdog.Guard guard;
    private TransportException abortReason;
    /** The future is being completed from outside: {@link #finish} leaves it to that thread. Guarded by this. */
    private boolean stoppedFromOutside;
    /** Chunks {@link #gather}ed and not yet posted; the submitting thread's only. */
    private Gathered gathered;

    /**
     * @param devices         whose completion queues a waiting thread polls (the transport's)
     * @param watchdog        bounds the flush after the submission's own deadline aborted it
     * @param flushBoundNanos how long an abort waits for the flush before it destroys the queue pairs
     * @param replacement     a connection for a chunk's lane, in place of one another submission's abort broke
     * @param signalEvery     one work request in this many asks for a completion ({@code rdma.ibverbs.signalEvery}):
     *                        a submission of more ops takes several completions, and a thread waiting for it polls
     *                        through the gaps between them ({@link SubmissionFuture})
     */
    public VerbsSubmission(int opCount, VerbsDevice[] devices, Watchdog watchdog, long flushBoundNanos,
                    Function<Chunk, CompletableFuture<VerbsConnection>> replacement, int signalEvery) {
        this.opCount = opCount;
        this.devices = devices;
        this.watchdog = watchdog;
        this.flushBoundNanos = flushBoundNanos;
        this.replacement = replacement;
        this.future = new SubmissionFuture(devices, this::stopFromOutside, opCount > signalEvery);
        future.whenComplete((ok, t) -> disarm());
    }

    private void disarm() {
        Watchdog.Guard g = guard;
        if (g != null) {
            g.disarm();
        }
    }

    /** The submission's own deadline passed: aborts, and destroys the queue pairs if the flush does not come in time. */
    public void timedOut(TransportException reason) {
        abort(reason);
        if (!drained.isDone()) {
            watchdog.arm(flushBoundNanos, () -> {
                if (!drained.isDone()) {
                    destroyConnections("the flush of ops that timed out did not arrive within " + flushBoundNanos / 1_000_000 + " ms");
                }
            });
        }
    }

    /** The deadline's guard, armed before any op starts: disarmed when the future completes, however it does. */
    public void guardedBy(Watchdog.Guard g) {
        guard = g;
        if (future.isDone()) {
            g.disarm();
        }
    }

    boolean isAborted() {
        return aborted;
    }

    /** Notes the connection that carries chunks of this submission. */
    public synchronized void uses(VerbsConnection c) {
        if (connection == null || connection == c) {
            connection = c;
        } else {
            (moreConnections == null ? moreConnections = new HashSet<>() : moreConnections).add(c);
        }
    }

    /**
     * Adds {@code n} chunks that will each be reported to {@link #chunkDone}, all on {@code c} when
     * it is not null (as {@link #uses} notes it).
     *
     * @return false, counting nothing, when the submission was aborted: the chunks must not be posted
     */
    public synchronized boolean expect(VerbsConnection c, int n) {
        if (aborted) {
            return false;
        }
        if (c != null) {
            uses(c);
        }
        remaining += n;
        return true;
    }

    /** Every chunk was counted: the submission may complete once they are all done. */
    public void sealed() {
        boolean done;
        synchronized (this) {
            counted = true;
            done = remaining == 0;
        }
        if (done) {
            finish();
        }
    }

    /** Fails the whole submission before (or instead of) posting, e.g. a failed handshake or check. */
    public void fail(int opIndex, TransportException e) {
        synchronized (this) {
            failedOps.set(opIndex);
            if (firstError == null) {
                firstError = e;
            }
        }
        abort(null);
    }

    /** {@code n} chunks completed successfully. */
    void chunksDone(int n) {
        boolean done;
        synchronized (this) {
            remaining -= n;
            done = remaining == 0 && counted;
        }
        if (done) {
            finish();
        }
    }

    /**
     * Gathers {@code chunk}, of one op on {@code c}, to be posted with the others gathered for
     * {@code c} ({@link #postGathered}): an action's ops to one queue pair go as one chain of work
     * requests. For the submitting thread only, while it starts the ops.
     */
    public void gather(VerbsConnection c, Chunk chunk) {
        (gathered == null ? gathered = new Gathered(opCount) : gathered).add(c, chunk);
    }

    /** Counts and queues, per connection, what {@link #gather} gathered, unless the submission was aborted meanwhile. */
    public void postGathered() {
        Gathered g = gathered;
        if (g == null) {
            return;
        }
        gathered = null;
        g.post(this);
    }

    void chunkDone(Chunk c, int status, String error) {
        boolean done;
        synchronized (this) {
            if (error != null) {
                failedOps.set(c.opIndex);
                TransportException e = toException(c, status, error);
                if (status == Ibv.IBV_WC_WR_FLUSH_ERR || status == -1) {
                    flushError = flushError == null ? e : flushError;
                } else if (firstError == null) {
                    firstError = e;
                }
            }
            done = --remaining == 0 && counted;
        }
        if (error != null && !aborted) {
            abort(null);
        }
        if (done) {
            finish();
        }
    }

    /**
     * {@code c} was flushed or not posted only because another submission's abort took its queue
     * pair out of service ({@link Chunk#collateral}): unless this submission was
     * aborted meanwhile (its own deadline, a cancel), posts it again on a replacement connection
     * of the same lane, where it counts as the same chunk. No collateral failures: actions that
     * share a queue pair with a cancelled or timed-out one finish on its replacement.
     */
    void collateral(Chunk c, String error) {
        boolean again;
        synchronized (this) {
            again = !aborted;
            if (again) {
                reposting.add(c);       // from now on an abort accounts for it
            }
        }
        if (!again) {
            chunkDone(c, -1, error);
            return;
        }
        LOG.log(System.Logger.Level.DEBUG, "posting again, on a replacement of {0}: {1}", c.connection, error);
        CompletableFuture<VerbsConnection> next;
        try {
            next = replacement.apply(c);
        } catch (RuntimeException e) {
            next = CompletableFuture.failedFuture(e);
        }
        next.whenComplete((conn, t) -> {
            synchronized (this) {
                if (!reposting.remove(c)) {
                    return;     // the abort accounted for it meanwhile
                }
                if (t == null) {
                    uses(conn);
                }
            }
            if (t != null) {
                chunkDone(c, -1, error + "; no replacement queue pair: " + VerbsTransport.failure(t).getMessage());
                return;
            }
            conn.enqueue(c.again());     // refused there, and counted, when this submission was aborted meanwhile
        });
    }

    private static TransportException toException(Chunk c, int status, String error) {
        String what = (c.opcode == Ibv.IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA WRITE") + " of " + c.length + " bytes via "
                + c.connection + ": " + error;
        if (status == Ibv.IBV_WC_REM_ACCESS_ERR) {
            return new TransportException(TransportException.Kind.REMOTE_ACCESS, what
                    + "; the owner's memory region refused it (buffer released, range outside it, or a write into a "
                    + "read-only buffer)");
        }
        if (status == Ibv.IBV_WC_RETRY_EXC_ERR
                || (status == Ibv.IBV_WC_WR_FLUSH_ERR || status == -1) && c.connection != null && c.connection.peerGone()) {
            return new TransportException(TransportException.Kind.PEER_UNREACHABLE, what);     // the peer is gone, however it showed
        }
        return new TransportException(TransportException.Kind.INTERNAL, what);
    }

    /**
     * Stops the submission: queued chunks are dropped, connections with chunks in flight are moved
     * to ERROR (flushing them). {@code reason} (a timeout, a cancel) wins over errors seen later.
     */
    void abort(TransportException reason) {
        boolean idle;
        List<VerbsConnection> toBreak;
        List<Chunk> notReposted = null;
        synchronized (this) {
            if (reason != null && abortReason == null) {
                abortReason = reason;
            }
            idle = remaining == 0;      // nothing in flight: complete now, later chunks are refused by expect()
            if (aborted) {
                toBreak = null;
            } else {
                aborted = true;
                toBreak = connections();
                if (!reposting.isEmpty()) {
                    notReposted = new ArrayList<>(reposting);
                    reposting.clear();
                }
            }
        }
        if (idle) {
            if (toBreak != null || reason != null) {
                finish();
            }
            return;
        }
        if (toBreak != null) {
            for (VerbsConnection c : toBreak) {
                if (reason != null) {
                    c.breakDown(reason.getMessage(), this);
                } else {
                    c.breakDown("an op of the same action failed");
                }
            }
        }
        if (notReposted != null) {
            for (Chunk c : notReposted) {
                chunkDone(c, -1, "not posted again: the op was stopped while its queue pair was being replaced");
            }
        }
    }

    /** The connections that carry chunks of this submission. Call with this object's lock held. */
    private List<VerbsConnection> connections() {
        List<VerbsConnection> all = new ArrayList<>();
        if (connection != null) {
            all.add(connection);
        }
        if (moreConnections != null) {
            all.addAll(moreConnections);
        }
        return all;
    }

    private void finish() {
        TransportException e;
        boolean outside;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            outside = stoppedFromOutside;
            e = abortReason != null ? abortReason : firstError != null ? firstError : flushError;
            if (e != null && opCount > 1 && abortReason == null) {
                e = new TransportException(e.kind(), failedOps.cardinality() + " of " + opCount + " ops failed: "
                        + e.getMessage(), e);
            }
        }
        drained.complete(null);
        if (outside) {
            return;     // the thread that stops the submission from outside completes the future
        }
        if (e == null) {
            observeTime();
        }
        future.settle(e);
    }

    /** Tells the poll windows of the devices that carried this (successful) submission how long it took, once each. */
    private synchronized void observeTime() {
        if (connection == null) {
            return;     // no op: nothing was carried
        }
        long took = System.nanoTime() - startNanos;
        for (VerbsDevice d : devices) {
            boolean used = connection.device == d;
            if (!used && moreConnections != null) {
                for (VerbsConnection c : moreConnections) {
                    used |= c.device == d;
                }
            }
            if (used) {
                d.pollWindow.observe(took);
            }
        }
    }

    /**
     * The future is about to be completed from outside: aborts (with {@code reason}, unless the
     * submission already ended) and returns once every chunk is accounted for. Meanwhile this
     * thread polls the completion queues itself (the poller may be this very thread, in a
     * dependent stage, or busy in one), so the flush comes in without another thread's help.
     * Where it has not come within {@link #flushBoundNanos}, destroys the queue pairs that carry
     * the submission's chunks, and goes on waiting for the chunks that were not posted yet
     * (refused at once: the submission was aborted). Never returns earlier; an interrupt is kept
     * for the caller.
     */
    private void stopFromOutside(TransportException reason) {
        synchronized (this) {
            stoppedFromOutside = true;
        }
        abort(reason);
        if (drained.isDone()) {
            return;
        }
        long start = System.nanoTime();
        boolean destroyed = false;
        boolean interrupted = false;
        while (!drained.isDone()) {
            int taken = 0;
            for (VerbsDevice d : devices) {
                taken += d.pollOnce(true);
            }
            if (drained.isDone()) {
                break;
            }
            if (taken > 0) {
                continue;
            }
            if (!destroyed && System.nanoTime() - start >= flushBoundNanos) {
                destroyed = true;
                destroyConnections("the flush of ops stopped from outside (" + reason.getMessage() + ") did not arrive within "
                        + flushBoundNanos / 1_000_000 + " ms");
                continue;
            }
            if (Thread.interrupted()) {
                interrupted = true;
            }
            LockSupport.parkNanos(this, VerbsDevice.REST_NANOS);
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Destroys the queue pairs that carry chunks of this submission (see {@link VerbsConnection#destroyNow}). */
    private void destroyConnections(String why) {
        List<VerbsConnection> all;
        synchronized (this) {
            all = connections();
        }
        LOG.log(System.Logger.Level.WARNING, "destroying {0}: {1}", all, why);
        for (VerbsConnection c : all) {
            try {
                c.destroyNow(why);
            } catch (RuntimeException e) {      // the wait goes on: the device's close accounts for the chunks then
                LOG.log(System.Logger.Level.ERROR, "destroying " + c + " failed", e);
            }
        }
    }
}
