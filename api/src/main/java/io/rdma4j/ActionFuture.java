package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.spi.RunOnJoin;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.Watchdog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The future of a submitted action, handed to the caller as it is (no wrapping future per
 * action). It completes with the {@link RdmaResult} (or {@code null} when none was asked for),
 * or exceptionally with a {@link CompletionException} around an {@link RdmaSubmitException},
 * as a dependent stage would. {@code cancel()} cancels every transport's future first, and
 * completes this one only once they all returned, that is once no transport touches the caller's
 * memory any more (a transport's {@code cancel()} returns only then: see
 * {@link io.rdma4j.spi.Transport#submit}); dependent stages therefore never see the action done
 * while a transfer still writes into its local segments. {@link #join()}
 * first lets the joining thread do the transports' work itself, where a transport offers it
 * ({@link #help()}), instead of waiting for one of the transport's threads to do it and then
 * wake this one. {@link #onEnd} lets the submitting {@link RdmaAction} know when the action ends.
 */
final class ActionFuture extends CompletableFuture<RdmaResult> {
    private static final VarHandle END_HOOK;
    private static final Object ENDED = new Object();

    static {
        try {
            END_HOOK = MethodHandles.lookup().findVarHandle(ActionFuture.class, "endHook", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Dispatcher dispatcher;
    private final ActionGroup groups;
    private final long startNanos;
    private final boolean wantResult;
    /** Set before the transports' futures are watched, so {@link #finish()} sees it; {@code null} when none was needed. */
    Watchdog.Guard guard;
    /**
     * Set by {@link #cancel} before it cancels the transports' futures: {@link #finish()}, which
     * runs once they are all done, then completes this future as cancelled.
     */
    private volatile boolean cancelRequested;
    /**
     * Set by the watchdog before it cancels the futures of transports that overran the deadline:
     * {@link #finish()} reports their cancellation as the timeout it is.
     */
    volatile String overran;
    /** {@code null}, the {@link RdmaAction} to tell when the action ends, or {@link #ENDED}. */
    @SuppressWarnings("unused") // through END_HOOK
    private volatile Object endHook;

    ActionFuture(Dispatcher dispatcher, ActionGroup groups, long startNanos, boolean wantResult) {
        this.dispatcher = dispatcher;
        this.groups = groups;
        this.startNanos = startNanos;
        this.wantResult = wantResult;
    }

    /**
     * For each transport whose future implements {@link RunOnJoin}, calls {@link RunOnJoin#runOnJoin()}:
     * by its contract it does, on the calling thread, the work
     * that no thread has started yet, or helps for a short while with work in progress (the verbs
     * transport polls for its completions), and returns. It calls it on a done future too: a
     * transport may learn from the call that its caller waits for its futures (TCP then stops
     * waking a thread per submit).
     */
    void help() {
        for (ActionGroup g = groups; g != null; g = g.next) {
            if (g.running instanceof RunOnJoin work) {
                work.runOnJoin();
            }
        }
    }

    /**
     * Runs the transports' pending work on this thread ({@link #help()}), unless the thread is
     * interrupted, then waits for the action.
     */
    @Override
    public RdmaResult join() {
        if (!Thread.currentThread().isInterrupted()) {
            help();
        }
        return super.join();
    }

    /**
     * Tells {@code submitter} when the action ends ({@link RdmaAction#submitEnded()}), before its
     * future completes or is cancelled; at once, on this thread, when it already ended. At most one.
     */
    void onEnd(RdmaAction submitter) {
        if (!END_HOOK.compareAndSet(this, null, submitter)) {
            submitter.submitEnded();
        }
    }

    private void ended() {
        if (END_HOOK.getAndSet(this, ENDED) instanceof RdmaAction submitter) {
            submitter.submitEnded();
        }
    }

    /** Once every group's future completed: frees what the action held and completes this future. */
    void finish() {
        if (guard != null) {
            guard.disarm();
        }
        long end = System.nanoTime(); // one reading times the action and each of its groups
        Map<String, Throwable> failures = null;
        for (ActionGroup g = groups; g != null; g = g.next) {
            g.releaseHeld();
            Throwable failure = null;
            if (g.running.isCompletedExceptionally()) {
                failure = Errors.toPublic(g.transport.name(), !g.running.isCancelled() ? g.running.exceptionNow()
                        : overran != null && !cancelRequested ? new TransportException(TransportException.Kind.TIMEOUT, overran)
                        : new CancellationException("cancelled"));
                if (failures == null) {
                    failures = new LinkedHashMap<>();
                }
                failures.put(g.transport.name(), failure);
            }
            g.finish(dispatcher.stats(), failure, end);
        }
        ended();
        if (cancelRequested) {
            super.cancel(false);
        } else if (failures == null) {
            complete(wantResult ? dispatcher.result(groups, startNanos, end) : null);
        } else {
            completeExceptionally(new CompletionException(new RdmaSubmitException(failures)));
        }
    }

    /**
     * Cancels the action: cancels every transport's future, each of which returns only once its
     * transport stopped touching the caller's memory, and only then completes this future as
     * cancelled (so a dependent stage may reuse the local segments at once). Blocks the calling
     * thread while the transports stop (a piece of a copy in flight, a queue pair's flush).
     *
     * @param mayInterruptIfRunning ignored, as by {@link CompletableFuture}
     * @return whether this future is cancelled now: {@code false} when the action had completed
     *         before (normally or not)
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (isDone()) {
            return isCancelled();
        }
        cancelRequested = true;
        for (ActionGroup g = groups; g != null; g = g.next) {
            CompletableFuture<Void> running = g.running;
            if (running != null) {
                running.cancel(false); // returns once the transport stopped touching the caller's memory
            }
        }
        // Every transport's future is done, so finish() ran or runs on another thread; either way
        // nothing touches the caller's memory now, and this completes the future at once if finish()
        // has not yet.
        if (super.cancel(mayInterruptIfRunning)) {
            ended();
        }
        return isCancelled();
    }
}
