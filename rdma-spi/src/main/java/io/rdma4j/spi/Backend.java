package io.rdma4j.spi;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One opened transport serving one manager.
 *
 * <p><b>Threading.</b> {@link #register} and {@link #release} are called only from the
 * manager's registration thread, one at a time. {@link #submit} may be called from any thread,
 * concurrently. {@link #close} is called once, after the last registration was released.
 */
public interface Backend extends AutoCloseable {

    /**
     * Same as {@link BackendProvider#name()}.
     *
     * @return the transport's name
     */
    String name();

    /**
     * How fast the transport is.
     *
     * @return the transport's speed class
     */
    TransportLevel level();

    /**
     * Makes {@code segment} reachable by remote peers under {@code bufferId}, and returns the
     * opaque bytes a peer's instance of this transport needs to reach it (TCP: its data endpoint;
     * verbs: device, GID, address, rkey). The bytes travel inside the token; keep them small
     * (at most {@value #MAX_CONTEXT_BYTES} bytes).
     *
     * <p>The segment is native, non-empty and alive; the manager keeps it alive until
     * {@link #release} for the same id returned.
     *
     * @param bufferId the id the manager assigned, unique for the manager's lifetime
     * @param segment  the memory to expose; the transport never owns it: the manager, or the caller
     *                 that registered it, keeps owning it and keeps it alive until {@link #release}
     *                 for {@code bufferId} returned
     * @return this transport's context bytes for the token, at most {@link #MAX_CONTEXT_BYTES}
     * @throws Exception when registration fails; the manager then releases the id from every
     *                   backend that had already registered it and fails the caller's future with
     *                   this exception as the cause
     */
    byte[] register(long bufferId, MemorySegment segment) throws Exception;

    /**
     * Forgets {@code bufferId}. Unknown ids are not an error. After return the transport must
     * not touch the segment again.
     *
     * @param bufferId an id earlier given to {@link #register}, or an unknown one (ignored)
     * @throws Exception when native deregistration fails; the manager aggregates it with the
     *                   other backends' failures
     */
    void release(long bufferId) throws Exception;

    /**
     * Runs {@code ops} against remote buffers, all before {@code deadline}. Must return quickly;
     * the work happens asynchronously. The future completes normally when every op succeeded;
     * otherwise exceptionally, preferably with a {@link TransportException} describing the
     * first or all failures. An op the deadline cut short fails with a
     * {@link TransportException.Kind#TIMEOUT} error; nothing waits past the deadline.
     *
     * <p>Sizes were checked by the caller: a read has {@code local >= remote.size()}, a write
     * {@code local <= remote.size()}. Local segments are native and alive at submission.
     *
     * @param ops      the transfers routed to this transport; their local segments stay owned by the
     *                 caller, who keeps them alive until the future completes
     * @param deadline when every op must have finished
     * @return a future that completes normally when every op succeeded, exceptionally otherwise
     */
    CompletableFuture<Void> submit(List<BackendOp> ops, Deadline deadline);

    /**
     * Runs {@code ops} like {@link #submit}, but on the calling thread, returning when they are
     * done: for callers that may block (a virtual thread, a dedicated worker), it saves the two
     * thread hand-offs of the asynchronous path, which dominate small transfers. Same size
     * guarantees, same deadline rule.
     *
     * <p>The default waits for {@link #submit}; transports that do blocking I/O anyway override it
     * to do the work inline.
     *
     * @param ops      the transfers, as for {@link #submit}; their local segments stay owned by the
     *                 caller, alive until this method returns
     * @param deadline when every op must have finished
     * @throws TransportException describing the failure; {@link TransportException.Kind#TIMEOUT}
     *                            when the deadline passed (the default gives a transport two seconds of
     *                            grace to report its own timeout first)
     */
    default void submitAndWait(List<BackendOp> ops, Deadline deadline) {
        CompletableFuture<Void> f = submit(ops, deadline);
        try {
            f.get(deadline.remainingNanos() + java.util.concurrent.TimeUnit.SECONDS.toNanos(2),
                    java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof TransportException te ? te
                    : new TransportException(TransportException.Kind.INTERNAL, name() + " submit failed: " + e.getCause(),
                    e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new TransportException(TransportException.Kind.TIMEOUT, name() + " did not finish " + ops.size()
                    + " op(s) by the deadline", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException(TransportException.Kind.INTERNAL, "interrupted while waiting for " + name(), e);
        }
    }

    /** Stops the transport and frees its resources. Idempotent. Never throws checked exceptions. */
    @Override
    void close();

    /** The most bytes a transport may put into a token's context. */
    int MAX_CONTEXT_BYTES = 4096;
}
