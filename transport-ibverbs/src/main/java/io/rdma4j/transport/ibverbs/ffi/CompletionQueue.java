package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_CQ;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A completion queue ({@code struct ibv_cq}). Owned by its {@link VerbsContext}.
 * {@link #poll} allocates nothing: completions land in a caller-owned {@link WorkCompletions}
 * array. Polling and arming must be done by one thread at a time.
 */
public final class CompletionQueue implements AutoCloseable {

    private final VerbsContext context;
    private final MemorySegment cq;
    private final MemorySegment pollFunction;
    private final MemorySegment notifyFunction;
    private final int entries;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CompletionQueue(VerbsContext context, MemorySegment cq) {
        this.context = context;
        this.cq = cq;
        this.pollFunction = context.pollCqFunction();
        this.notifyFunction = context.reqNotifyCqFunction();
        this.entries = cq.get(JAVA_INT, offset(IBV_CQ, "cqe"));
    }

    static CompletionQueue create(VerbsContext context, int minimumEntries, CompletionChannel channel) {
        if (channel != null) {
            channel.checkOpen();
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            // a local, not a conditional expression: invokeExact would type that argument as Object
            MemorySegment channelPointer = channel == null ? MemorySegment.NULL : channel.pointer();
            MemorySegment cq = (MemorySegment) IbvFunctions.CREATE_CQ.invokeExact(state, context.pointer(), minimumEntries,
                    MemorySegment.NULL, channelPointer, 0);
            return new CompletionQueue(context, Calls.checkPointer("ibv_create_cq", cq, state, IBV_CQ.byteSize()));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Moves up to {@code completions.capacity()} completions into {@code completions}
     * ({@code ibv_poll_cq}, called through the context's function table), starting at index 0.
     * Allocates nothing.
     *
     * @param completions where to put them; read entries 0 to the returned count - 1
     * @return how many completions were taken, 0 if none was waiting
     * @throws IbverbsException if the driver reports a polling error (negative result)
     * @throws IllegalStateException if this queue or {@code completions} is closed
     */
    public int poll(WorkCompletions completions) {
        Calls.checkOpen(closed.get(), "completion queue");
        int n;
        try {
            n = (int) IbvFunctions.POLL_CQ.invokeExact(pollFunction, cq, completions.capacity(), completions.segment());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (n < 0) {
            throw new IbverbsException("ibv_poll_cq", 0, "ibv_poll_cq failed: returned " + n);
        }
        return n;
    }

    /**
     * Arms the queue ({@code ibv_req_notify_cq}): the next completion raises one event on its
     * {@link CompletionChannel}.
     *
     * @param solicitedOnly true to be woken only by solicited completions
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this queue is closed
     */
    public void requestNotification(boolean solicitedOnly) {
        Calls.checkOpen(closed.get(), "completion queue");
        int result;
        try {
            result = (int) IbvFunctions.REQ_NOTIFY_CQ.invokeExact(notifyFunction, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
        if (result != 0) {
            throw IbverbsException.failed("ibv_req_notify_cq", result, "");
        }
    }

    /**
     * The number of entries the driver gave the queue.
     *
     * @return at least the requested minimum
     */
    public int entries() {
        return entries;
    }

    VerbsContext context() {
        return context;
    }

    MemorySegment pointer() {
        return cq;
    }

    long address() {
        return cq.address();
    }

    void checkOpen() {
        Calls.checkOpen(closed.get(), "completion queue");
    }

    /**
     * Destroys the queue ({@code ibv_destroy_cq}). Idempotent. Events from its channel are
     * acknowledged as they are received, so none is left pending.
     *
     * @throws IbverbsException if the call fails, e.g. errno 16 (EBUSY) while a queue pair still
     *                          uses it (the queue then stays open)
     */
    @Override
    public void close() {
        if (Calls.destroyOnce(closed, "ibv_destroy_cq", IbvFunctions.DESTROY_CQ, cq)) {
            context.removed(this);
        }
    }
}
