package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.device.PollWindow;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.spi.RunOnJoin;
import io.rdma4j.spi.TransportException;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The future of one {@link VerbsSubmission}, the one the manager holds. The submission completes
 * it once drained ({@link #settle}). Whatever completes it from outside ({@code cancel}, {@code
 * completeExceptionally} as the manager's watchdog does, {@code complete}, {@code obtrude*}) first
 * stops the submission and waits, in the calling thread, until the device can no longer touch its
 * memory ({@link VerbsSubmission}'s stopFromOutside); only then does the future complete.
 *
 * <p>It implements {@link RunOnJoin}: its {@code runOnJoin()}, called by a thread about to wait
 * for it, polls the devices' completion queues on that thread (one waiting thread per device at a
 * time) for up to their poll window after the last completion it took ({@link PollWindow#nanos},
 * or {@link PollWindow#waiterNanos} for a submission of several completions), so that a short op,
 * or the next completion of a long action of small ops, completes without waking the poller or
 * the waiting thread.
 *
 * <p>Thread-safe, as {@link CompletableFuture} is.
 */
public final class SubmissionFuture extends CompletableFuture<Void> implements RunOnJoin {

    /** Whose completion queues a waiting thread polls (the transport's). */
    private final VerbsDevice[] devices;
    /** Stops the submission and returns once nothing of it is in flight any more (its stopFromOutside). */
    private final Consumer<TransportException> stop;
    /**
     * Whether the submission takes several completions of its own (more ops than one completion
     * stands for): a waiting thread then polls through the gaps between completions ({@link
     * PollWindow#waiterNanos}). A submission of one completion is waited for in the poll window
     * ({@link PollWindow#nanos}): polling through the gaps between other threads' completions
     * until its own came spun one thread through whole large transfers (64 KiB reads, 8 waiting
     * threads of one op each: 10 % slower in the soft-RoCE VM).
     */
    private final boolean severalCompletions;

    SubmissionFuture(VerbsDevice[] devices, Consumer<TransportException> stop, boolean severalCompletions) {
        this.devices = devices;
        this.stop = stop;
        this.severalCompletions = severalCompletions;
    }


    /** Cancels once nothing of the submission is in flight any more (aborting it first); see {@link VerbsSubmission}. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (!isDone()) {
            stop.accept(new TransportException(TransportException.Kind.TIMEOUT, "cancelled"));
        }
        return super.cancel(mayInterruptIfRunning);
    }

    /** Completes with {@code ex} once nothing of the submission is in flight any more (aborting it first). */
    @Override
    public boolean completeExceptionally(Throwable ex) {
        Objects.requireNonNull(ex);
        if (!isDone()) {
            stop.accept(ex instanceof TransportException te ? te
                    : new TransportException(TransportException.Kind.TIMEOUT, "completed from outside: " + ex));
        }
        return super.completeExceptionally(ex);
    }

    /** Completes with {@code value} once nothing of the submission is in flight any more (aborting it first). */
    @Override
    public boolean complete(Void value) {
        if (!isDone()) {
            stop.accept(new TransportException(TransportException.Kind.TIMEOUT, "completed from outside"));
        }
        return super.complete(value);
    }

    @Override
    public void obtrudeValue(Void value) {
        stop.accept(new TransportException(TransportException.Kind.TIMEOUT, "completed from outside"));
        super.obtrudeValue(value);
    }

    @Override
    public void obtrudeException(Throwable ex) {
        Objects.requireNonNull(ex);
        stop.accept(new TransportException(TransportException.Kind.TIMEOUT, "completed from outside: " + ex));
        super.obtrudeException(ex);
    }

    /** Through {@link #complete} and {@link #completeExceptionally}, which stop the submission first. */
    @Override
    public CompletableFuture<Void> completeAsync(Supplier<? extends Void> supplier, Executor executor) {
        Objects.requireNonNull(supplier);
        Objects.requireNonNull(executor);
        executor.execute(() -> {
            Void v;
            try {
                v = supplier.get();
            } catch (Throwable t) {
                completeExceptionally(t);
                return;
            }
            complete(v);
        });
        return this;
    }

    /** How the submission itself completes the future, once drained. */
    void settle(TransportException e) {
        if (e == null) {
            super.complete(null);
        } else {
            super.completeExceptionally(e);
        }
    }

    /**
     * Polls the devices' completion queues on this thread until this future is done, or until
     * the longest of their poll windows (above) passed without a completion; then
     * returns (done or not).
     * Only one waiting thread polls a device at a time, so that many waiters do not spin the
     * CPUs that the device's driver needs too (soft-RoCE does its work on the host's CPUs);
     * a thread that finds every device taken returns at once and sleeps on the future.
     */
    @Override
    public void runOnJoin() {
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
                    PollWindow w = devices[i].pollWindow;
                    pollNanos = Math.max(pollNanos, severalCompletions ? w.waiterNanos() : w.nanos());
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
                    for (int i = 0; i < devices.length && i < Long.SIZE; i++) {
                        if ((claimed & 1L << i) != 0) {
                            devices[i].waiterPollEnded();
                        }
                    }
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
