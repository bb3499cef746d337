package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.Watchdog;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One {@code submit}: its chunks across connections, and the future the manager holds.
 *
 * <p>The future completes only when every chunk is accounted for (completed, flushed or never
 * posted), so the device touches none of the caller's memory afterwards. A timeout or a cancel
 * aborts: every connection with chunks of this submission in flight is moved to ERROR, which
 * flushes them. On a timeout the future completes after the flush; a cancel (or the manager's
 * watchdog) completes the future from outside, so {@link #onExternalCompletion} waits there, in
 * the completing thread, for the flush (bounded by {@link #FLUSH_WAIT_SECONDS}) before returning.
 *
 * <p>Errors: the first real error (not a flush that an earlier error caused) is reported with the
 * work-completion status text, and with "k of n ops failed" when several ops were submitted.
 *
 * <p>The future is a {@link RunnableFuture}: its {@code run()}, called by a thread about to wait
 * for it, polls the devices' completion queues on that thread (one waiting thread per device at a
 * time) for up to their {@link PollWindow} after the last completion it took, so that a short op
 * completes without waking the poller or the waiting thread. A submission that succeeds tells its
 * devices' windows how long it took.
 */
final class VerbsSubmission {

    /** How long a cancel waits for the flush of what it aborted. */
    static final long FLUSH_WAIT_SECONDS = 5;
    private static final System.Logger LOG = System.getLogger(VerbsSubmission.class.getName());

    final Future future = new Future();
    private final CompletableFuture<Void> drained = new CompletableFuture<>();
    private final VerbsDevice[] devices;
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

    /**
     * @param devices   whose completion queues a waiting thread polls (the transport's)
     */
    VerbsSubmission(int opCount, VerbsDevice[] devices) {
        this.opCount = opCount;
        this.devices = devices;
        future.whenComplete((ok, t) -> {
            Watchdog.Guard g = guard;
            if (g != null) {
                g.disarm();
            }
            if (!drained.isDone()) {
                onExternalCompletion();
            }
        });
    }

    /** The deadline's guard, armed before any op starts: disarmed when the future completes, however it does. */
    void guardedBy(Watchdog.Guard g) {
        guard = g;
        if (future.isDone()) {
            g.disarm();
        }
    }

    /** The manager's future; {@code run()} lets a thread about to wait for it poll for the completions itself. */
    final class Future extends CompletableFuture<Void> implements RunnableFuture<Void> {

        /**
         * Polls the devices' completion queues on this thread until this future is done, or until
         * the longest of their poll windows ({@link PollWindow}) passed without a completion; then
         * returns (done or not).
         * Only one waiting thread polls a device at a time, so that many waiters do not spin the
         * CPUs that the device's driver needs too (soft-RoCE does its work on the host's CPUs);
         * a thread that finds every device taken returns at once and sleeps on the future.
         */
        @Override
        public void run() {
            if (isDone()) {
                return;
            }
            long claimed = 0;       // bit i: this thread polls devices[i] (one waiting thread per device at a time)
            for (int i = 0; i < devices.length && i < Long.SIZE; i++) {
                if (devices[i].claimWaiterPolling()) {
                    claimed |= 1L << i;
                }
            }
            if (claimed == 0) {
                return;     // other waiters poll: this thread sleeps until one of them (or the poller) completes its ops
            }
            try {
                long pollNanos = 0;
                for (int i = 0; i < devices.length && i < Long.SIZE; i++) {
                    if ((claimed & 1L << i) != 0) {
                        pollNanos = Math.max(pollNanos, devices[i].pollWindow.nanos());
                    }
                }
                long last = System.nanoTime();
                while (!isDone()) {
                    int taken = 0;
                    for (int i = 0; i < devices.length && i < Long.SIZE; i++) {
                        if ((claimed & 1L << i) != 0) {
                            taken += devices[i].pollOnce(false);
                        }
                    }
                    long now = System.nanoTime();
                    if (taken > 0) {
                        last = now;
                    } else if (now - last >= pollNanos) {
                        return;
                    } else {
                        Thread.onSpinWait();
                    }
                }
            } finally {
                for (int i = 0; i < devices.length && i < Long.SIZE; i++) {
                    if ((claimed & 1L << i) != 0) {
                        devices[i].releaseWaiterPolling();
                    }
                }
            }
        }
    }

    boolean isAborted() {
        return aborted;
    }

    /** Notes the connection that carries chunks of this submission. */
    synchronized void uses(VerbsConnection c) {
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
    synchronized boolean expect(VerbsConnection c, int n) {
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
    void sealed() {
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
    void fail(int opIndex, TransportException e) {
        synchronized (this) {
            failedOps.set(opIndex);
            if (firstError == null) {
                firstError = e;
            }
        }
        abort(null);
    }

    void chunkDone(VerbsConnection.Chunk c, int status, String error) {
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

    private static TransportException toException(VerbsConnection.Chunk c, int status, String error) {
        String what = (c.opcode == Ibv.IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA WRITE") + " of " + c.length + " bytes via "
                + c.connection + ": " + error;
        if (status == Ibv.IBV_WC_REM_ACCESS_ERR) {
            return new TransportException(TransportException.Kind.REMOTE_ACCESS, what
                    + "; the owner's memory region refused it (buffer released, or range outside it)");
        }
        if (status == Ibv.IBV_WC_RETRY_EXC_ERR) {
            return new TransportException(TransportException.Kind.PEER_UNREACHABLE, what);
        }
        return new TransportException(TransportException.Kind.INTERNAL, what);
    }

    /**
     * Stops the submission: queued chunks are dropped, connections with chunks in flight are moved
     * to ERROR (flushing them). {@code reason} (a timeout, a cancel) wins over errors seen later.
     */
    void abort(TransportException reason) {
        boolean idle;
        List<VerbsConnection> toBreak = new ArrayList<>();
        synchronized (this) {
            if (reason != null && abortReason == null) {
                abortReason = reason;
            }
            idle = remaining == 0;      // nothing in flight: complete now, later chunks are refused by expect()
            if (aborted) {
                if (idle && reason != null) {
                    finish();
                }
                return;
            }
            aborted = true;
            if (connection != null) {
                toBreak.add(connection);
            }
            if (moreConnections != null) {
                toBreak.addAll(moreConnections);
            }
        }
        if (idle) {
            finish();
            return;
        }
        for (VerbsConnection c : toBreak) {
            c.breakDown(reason != null ? reason.getMessage() : "an op of the same action failed");
        }
    }

    private void finish() {
        TransportException e;
        synchronized (this) {
            if (finished) {
                return;
            }
            finished = true;
            e = abortReason != null ? abortReason : firstError != null ? firstError : flushError;
            if (e != null && opCount > 1 && abortReason == null) {
                e = new TransportException(e.kind(), failedOps.cardinality() + " of " + opCount + " ops failed: "
                        + e.getMessage(), e);
            }
        }
        drained.complete(null);
        if (e == null) {
            observeTime();
            future.complete(null);
        } else {
            future.completeExceptionally(e);
        }
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

    /** The future was completed from outside (cancel, watchdog): abort and wait for the flush here. */
    private void onExternalCompletion() {
        abort(new TransportException(TransportException.Kind.TIMEOUT, "cancelled"));
        try {
            drained.get(FLUSH_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "ops cancelled from outside did not flush within {0} s: {1}",
                    FLUSH_WAIT_SECONDS, e.toString());
        }
    }
}
