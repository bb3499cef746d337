package io.rdma4j.spi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One opened transport serving one manager.
 *
 * <p><b>Threading.</b> {@link #register} and {@link #release} are called only from the manager's
 * registration thread, one at a time. {@link #allocate}, {@link #prepareLocal},
 * {@link #decodeContext}, {@link #submit} and {@link #submitAndWait} may be called from any
 * thread, concurrently. {@link #close} is called once, after the last registration was released.
 *
 * <p><b>Memory.</b> The transport never owns the memory it is given: registered segments belong
 * to the manager or to the caller that registered them, local segments of ops to the caller.
 * What the transport creates for them (a memory registration, a mapping) it frees itself: in
 * {@link #release} for registrations, in {@link LocalMemory#close()} for prepared local memory.
 */
public interface Transport extends AutoCloseable {

    /** The most bytes a transport may put into a token's context. */
    int MAX_CONTEXT_BYTES = 4096;

    /**
     * Same as {@link TransportProvider#name()}.
     *
     * @return the transport's name
     */
    String name();

    /**
     * Makes {@code segment} reachable by remote peers under {@code bufferId}, or says that this
     * transport cannot serve it.
     *
     * <p>The segment is native, non-empty, shared and alive; the manager keeps it alive until
     * {@link #release} for the same id returned.
     *
     * <p><b>Read-only registrations.</b> A read-only segment ({@link MemorySegment#isReadOnly()})
     * is a read-only registration: peers may read it and must not write it. The holder's manager
     * refuses writes its token marks read-only before they reach a transport, but a token can be
     * edited, so the transport must enforce it on the owner's authority: refuse every remote
     * write to the buffer, per op, with {@link ErrorCode#READ_ONLY} (raised on the owner side as
     * {@link BufferAccessException#readOnly(long)}; see {@link LocalBuffer#readOnly()}), without
     * changing a byte of it and without breaking other ops; serve reads as usual. Never ask for
     * write access to the memory (the pages may be mapped {@code PROT_READ}: a verbs transport
     * registers it without local or remote write). A transport that cannot enforce this must
     * answer {@link Registered#notApplicable}.
     *
     * @param bufferId the id the manager assigned, unique for the manager's lifetime
     * @param segment  the memory to expose, read-only when the registration is; owned by the
     *                 manager or by the caller that registered it, never by the transport
     * @return {@link Registered#context} with the bytes a peer's instance of this transport needs
     *         (at most {@link #MAX_CONTEXT_BYTES}), or {@link Registered#notApplicable} when this
     *         transport cannot serve this memory (the token then omits the transport, and the
     *         manager does not call {@link #release} for the id)
     * @throws Exception when registration failed for real; the manager then releases the id from
     *                   every transport that had already registered it and fails the caller's
     *                   future with this exception as the cause
     */
    Registered register(long bufferId, MemorySegment segment) throws Exception;

    /**
     * Forgets {@code bufferId}. After return the transport must not touch the segment again.
     *
     * @param bufferId an id this transport registered; unknown ids are ignored
     * @throws Exception when native deregistration fails; the manager aggregates it with the
     *                   other transports' failures and the buffer counts as released anyway
     */
    void release(long bufferId) throws Exception;

    /**
     * Offers to provide the memory of {@code RdmaManager.allocate(size)}: a shared-memory transport
     * backs it with a file a peer process can map, a verbs transport may want huge pages. The
     * manager asks the transports in priority order and takes the first segment offered; when
     * none offers, it allocates plain native memory. Default: no offer.
     *
     * @param size  the length in bytes, at least 1
     * @param arena the manager's arena for this buffer: tie the segment's lifetime to it (e.g.
     *              {@link MemorySegment#reinterpret(long, Arena, java.util.function.Consumer)}
     *              with a cleanup that unmaps); the manager closes it once the buffer is released
     *              everywhere and the last access finished
     * @return a zeroed, page-aligned segment of exactly {@code size} bytes, shared by all threads,
     *         whose lifetime is {@code arena}'s; or {@code null} to decline
     * @throws Exception when the transport wanted to provide the memory and failed; the manager
     *                   then fails the allocation with it as the cause
     */
    default MemorySegment allocate(long size, Arena arena) throws Exception {
        return null;
    }

    /**
     * Prepares a caller's local segment for use in ops (verbs: registers it with the device and
     * returns the handle holding the lkey). The manager caches what this returns, bounded, keyed by
     * the segment's address and size, and closes it when the cache evicts it or the segment's arena
     * is closed; segments inside a buffer registered with the manager use that registration
     * instead and are never prepared twice. Default: nothing to prepare.
     *
     * @param segment native, shared, alive memory of the caller; the caller keeps owning it
     * @return the prepared handle, closed by the manager exactly once; or {@code null} when this
     *         transport needs nothing for local memory
     * @throws Exception when preparation fails; ops using the segment fail with it as the cause
     */
    default LocalMemory prepareLocal(MemorySegment segment) throws Exception {
        return null;
    }

    /**
     * Whether ops need prepared local memory ({@link TransportOp#localMemory()}); when not, the
     * manager skips the local-memory lookup on every op. Default: no.
     *
     * @return {@code true} when {@link #prepareLocal} must be called for ops' local segments
     */
    default boolean preparesLocalMemory() {
        return false;
    }

    /**
     * Decodes this transport's part of a token once, so that ops need not do it again (TCP: the
     * peer's data address and the request header; verbs: GID, rkey, the queue-pair key). The
     * manager caches the result per token, bounded, and hands it back in
     * {@link TransportOp#remoteContext()}. Default: the raw context bytes.
     *
     * @param remote the buffer as this transport sees it
     * @return the decoded form; any object, never {@code null}
     * @throws TransportException with {@link TransportException.Kind#PROTOCOL} when the context
     *                            bytes are malformed; with {@link TransportException.Kind#PEER_UNREACHABLE}
     *                            when this transport cannot reach the buffer's owner from this process
     *                            (a same-host transport and an owner on another host): the manager then
     *                            routes the token to the next transport both sides run, for as long
     *                            as it caches the token's route
     */
    default Object decodeContext(RemoteBufferRef remote) {
        return remote.context();
    }

    /**
     * Runs {@code ops}, all before {@code deadline}. Must return quickly; the work happens
     * asynchronously. The future completes normally when every op succeeded; otherwise
     * exceptionally with a {@link TransportException} describing the first or all failures. An op
     * the deadline cut short fails with {@link TransportException.Kind#TIMEOUT}.
     *
     * <p><b>After the future completes</b> (normally, exceptionally, or because the caller
     * cancelled it) the transport must no longer write into any local segment of these ops, nor
     * read from it; cancelling the future must stop the work and free what it held. So the
     * future's {@code cancel()} (and {@code completeExceptionally()}, should anyone call it) must
     * <em>first</em> stop the work, waiting for what is in flight (a copy's current piece, a
     * socket exchange, the flush of posted work requests), and complete the future only then,
     * with no time limit that returns early: a plain {@link CompletableFuture} completes at once
     * and is only right for work that never touches the caller's memory after it is handed over.
     * The manager cancels the transports' futures when the caller cancels an action, and when a
     * transport overran the deadline by a grace period; it completes the caller's future only
     * after every such {@code cancel()} returned.
     *
     * <p>A future that also implements {@link RunOnJoin} lets a thread about to wait for it do the
     * work (see there for who calls it and what it must do); any other future is simply waited for.
     *
     * <p>Sizes were checked by the manager: each op moves exactly {@code local().byteSize()}
     * bytes, and the remote range lies within the token's range. Local segments are native,
     * shared and alive at submission.
     *
     * @param ops      the transfers routed to this transport; their local segments stay owned by
     *                 the caller, who keeps them alive until the future completes
     * @param deadline when every op must have finished
     * @return a future that completes normally when every op succeeded, exceptionally otherwise
     */
    CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline);

    /**
     * Runs {@code ops} like {@link #submit}, but on the calling thread, returning when they are
     * done: for callers that may block, it saves the thread hand-offs of the asynchronous path.
     * Same rules as {@link #submit}. The default calls {@link RunOnJoin#runOnJoin()} on
     * {@link #submit}'s future when it implements {@link RunOnJoin} and is not done, then waits for
     * it, cancelling it at the deadline.
     *
     * @param ops      the transfers, as for {@link #submit}; their local segments stay owned by the
     *                 caller, alive until this method returns
     * @param deadline when every op must have finished
     * @throws TransportException describing the failure; {@link TransportException.Kind#TIMEOUT}
     *                            when the deadline passed
     */
    default void submitAndWait(List<TransportOp> ops, Deadline deadline) {
        CompletableFuture<Void> f = submit(ops, deadline);
        if (f instanceof RunOnJoin work && !f.isDone()) {
            work.runOnJoin();     // the work nobody started, or a while of helping, on this thread
        }
        try {
            f.get(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof TransportException te ? te
                    : new TransportException(TransportException.Kind.INTERNAL, name() + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            f.cancel(false);
            throw new TransportException(TransportException.Kind.TIMEOUT, name() + " did not finish " + ops.size()
                    + " op(s) by the deadline", e);
        } catch (InterruptedException e) {
            f.cancel(false);
            Thread.currentThread().interrupt();
            throw new TransportException(TransportException.Kind.INTERNAL, "interrupted while waiting for " + name(), e);
        }
    }

    /** Stops the transport and frees its resources. Idempotent. Never throws checked exceptions. */
    @Override
    void close();
}
