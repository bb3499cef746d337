package io.rdma4j;

import io.rdma4j.spi.TransportOp.OpType;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * A batch of reads and writes against remote buffers, submitted together.
 *
 * <p>Sizes, and writes to read-only buffers ({@link RdmaRemoteBuffer#isReadOnly()}), are checked
 * as ops are added, and a rejected op is not queued. Prefix semantics: a
 * read copies the whole remote buffer into the first {@code remote.size()} bytes of the local
 * segment; a write copies the whole local segment into the first {@code local.byteSize()} bytes
 * of the remote buffer. Bytes beyond are untouched on both sides. Overlap between ops is not
 * checked: two ops writing the same range race (reading one local range for several writes is fine).
 *
 * <p>{@link #submit} routes each op to the first transport, in priority order, that this manager
 * runs and the token advertises, runs the per-transport groups in parallel and waits for all.
 * The ops stay queued, so the same action can be submitted again (it is routed afresh).
 *
 * <p><b>Ownership:</b> local segments belong to the caller and must stay alive, and must not be
 * written (reads) or changed (writes) by the caller, until the submit's future completes.
 *
 * <p>Not thread-safe for building; one submit at a time.
 */
public final class RdmaAction {

    record Op(OpType type, RdmaRemoteBuffer remote, MemorySegment local) {
    }

    private static final VarHandle SUBMITTING;

    static {
        try {
            SUBMITTING = MethodHandles.lookup().findVarHandle(RdmaAction.class, "submitting", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdmaManager manager;
    /** Sized for the common action of one op; grows as ops are added. */
    private final List<Op> ops = new ArrayList<>(1);
    private volatile boolean submitting;
    private Set<String> required;
    /**
     * How the dispatcher routed these ops last time, reused while the ops, {@link #required} and
     * the manager's registrations do not change; null until the first submit and after a change.
     * Read and written only during a submit call (guarded by {@link #submitting}).
     */
    Dispatcher.Plan plan;
    /** Whether the dispatcher routed these ops before: the plan is kept from the second time on. */
    boolean routedBefore;

    RdmaAction(RdmaManager manager) {
        this.manager = manager;
    }

    /**
     * Queues a read of the whole {@code remote} buffer into the start of {@code local}.
     *
     * @param remote the token of the buffer to read
     * @param local  the destination: native, shared, writable memory of at least
     *               {@code remote.size()} bytes; the caller keeps owning it and must keep it alive,
     *               and not write it, until the submit completes
     * @return this action
     * @throws IllegalArgumentException if {@code local} is smaller than the remote buffer, on the
     *                                  heap, read-only, thread-confined or its arena is closed
     * @throws IllegalStateException    while this action is being submitted
     */
    public RdmaAction readInto(RdmaRemoteBuffer remote, MemorySegment local) {
        checkLocal(remote, local);
        if (local.isReadOnly()) {
            throw new IllegalArgumentException("cannot read into a read-only segment");
        }
        if (local.byteSize() < remote.size()) {
            throw new IllegalArgumentException("destination local memory size (" + local.byteSize()
                    + ") must be >= remote buffer size (" + remote.size() + ")");
        }
        return add(new Op(OpType.READ_INTO_LOCAL, remote, local));
    }

    /**
     * Queues a write of the whole of {@code local} into the start of the {@code remote} buffer.
     *
     * @param remote the token of the buffer to write
     * @param local  the source: native, shared memory of 1 to {@code remote.size()} bytes; the
     *               caller keeps owning it and must keep it alive, and unchanged, until the submit
     *               completes
     * @return this action
     * @throws IllegalArgumentException if the remote buffer is read-only ({@link RdmaRemoteBuffer#isReadOnly()}),
     *                                  or {@code local} is larger than the remote buffer, empty,
     *                                  on the heap, thread-confined or its arena is closed
     * @throws IllegalStateException    while this action is being submitted
     */
    public RdmaAction writeFrom(RdmaRemoteBuffer remote, MemorySegment local) {
        checkLocal(remote, local);
        if (remote.isReadOnly()) {
            throw new IllegalArgumentException("cannot write to buffer " + remote.id() + ": it is read-only (its owner "
                    + "registered it without remote write access); nothing was queued");
        }
        if (local.byteSize() > remote.size()) {
            throw new IllegalArgumentException("source local memory size (" + local.byteSize()
                    + ") must be <= remote buffer size (" + remote.size() + ")");
        }
        return add(new Op(OpType.WRITE_FROM_LOCAL, remote, local));
    }

    private void checkLocal(RdmaRemoteBuffer remote, MemorySegment local) {
        Objects.requireNonNull(remote, "remote");
        if (submitting) {
            throw new IllegalStateException("cannot add to an action that is currently being submitted");
        }
        Segments.checkLocal(local);
    }

    private RdmaAction add(Op op) {
        ops.add(op);
        plan = null;
        return this;
    }

    /**
     * Lets this action's ops go only over these transports (by provider name, e.g.
     * {@code "ibverbs"}), so that none silently takes a slower one: an op whose token shares none
     * of them with this manager makes {@link #submit} fail at once, before anything is sent, with
     * {@link NoCompatibleTransportException} naming what each side offers. Calling it again
     * replaces the set.
     *
     * @param names the transports allowed; at least one, no {@code null}
     * @return this action
     * @throws IllegalArgumentException if {@code names} is empty
     * @throws IllegalStateException    while this action is being submitted
     */
    public RdmaAction requireTransport(String... names) {
        if (names.length == 0) {
            throw new IllegalArgumentException("requireTransport needs at least one transport name");
        }
        if (submitting) {
            throw new IllegalStateException("cannot change an action that is currently being submitted");
        }
        required = Set.copyOf(List.of(names));
        plan = null;
        return this;
    }

    /**
     * Number of queued ops.
     *
     * @return how many ops are queued; submitting does not remove them
     */
    public int size() {
        return ops.size();
    }

    /**
     * Runs every queued op, all within {@code timeout}. An empty action succeeds at once.
     *
     * <p>{@code join()} on the returned future lets the joining thread carry the transfer itself
     * when the transport offers that (TCP does) and none of the transport's threads has started it
     * yet: that saves the hand-off to a transport thread and back, as {@link #submitAndWait} does.
     * An interrupt of that thread during the transfer then fails it, as in {@link #submitAndWait}.
     * {@code get()} and dependent stages wait as usual.
     *
     * @param timeout the time all ops together may take, counted from this call
     * @return completes when every op finished; fails with {@link RdmaSubmitException} naming each
     *         failing transport (its per-transport causes are {@link RdmaTimeoutException},
     *         {@link RemoteAccessException}, {@link PeerUnreachableException}, ...), with
     *         {@link NoCompatibleTransportException} before anything was sent when an op's token shares
     *         no transport with this manager (or none of those {@link #requireTransport} allows), or with
     *         {@link ManagerClosedException}
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException    if the previous submit of this action is still running
     */
    public CompletableFuture<Void> submit(Duration timeout) {
        return start(timeout, false);
    }

    /**
     * {@link #submit}, completing with what the action did: the transports used, the ops run,
     * the bytes moved and the time taken.
     *
     * @param timeout the time all ops together may take, counted from this call
     * @return completes with the result, or fails as {@link #submit} does
     * @throws IllegalArgumentException if {@code timeout} is negative
     * @throws IllegalStateException    if the previous submit of this action is still running
     */
    public CompletableFuture<RdmaResult> submitForResult(Duration timeout) {
        return start(timeout, true);
    }

    @SuppressWarnings("unchecked") // the dispatcher's future completes with null unless a result was asked for
    private <T> CompletableFuture<T> start(Duration timeout, boolean wantResult) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        if (!SUBMITTING.compareAndSet(this, false, true)) {
            throw new IllegalStateException("this action is currently being submitted");
        }
        CompletableFuture<RdmaResult> f;
        try {
            f = manager.submit(this, ops, required, timeout, wantResult); // read during the call; no op is added while submitting
        } catch (RuntimeException e) {
            submitting = false;
            throw e;
        }
        if (f instanceof ActionFuture action) {
            // Handed out as it is: its cancel() reaches the transports, its join() runs their pending work here.
            action.onEnd(this);
            return (CompletableFuture<T>) action;
        }
        // Nothing was sent (an empty action, ops that cannot be routed, a closed manager): f is done.
        return (CompletableFuture<T>) f.whenComplete((result, failure) -> submitEnded());
    }

    /** The submit ended: the action may be changed and submitted again. */
    void submitEnded() {
        submitting = false;
    }

    /**
     * Runs every queued op, all within {@code timeout}, and returns when they are done. When all
     * ops go to one transport, the transfer runs on the calling thread, which saves the two thread
     * hand-offs of an asynchronous transfer (on loopback TCP, {@code submit(timeout).join()} saves
     * them too, and both take about as long as a plain socket round trip): use it from threads that
     * may block, such as virtual threads.
     *
     * @param timeout the time all ops together may take, counted from this call
     * @return what the action did: the transports used, the ops run, the bytes moved, the time taken
     * @throws RdmaSubmitException          naming each failing transport, as {@link #submit} reports it
     * @throws NoCompatibleTransportException before anything was sent
     * @throws ManagerClosedException       when the manager is closed
     * @throws IllegalArgumentException     if {@code timeout} is negative
     * @throws IllegalStateException        if a submit of this action is still running
     */
    public RdmaResult submitAndWait(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        if (!SUBMITTING.compareAndSet(this, false, true)) {
            throw new IllegalStateException("this action is currently being submitted");
        }
        try {
            return manager.submitAndWait(this, ops, required, timeout); // read during the call; no op is added while submitting
        } finally {
            submitting = false;
        }
    }
}
