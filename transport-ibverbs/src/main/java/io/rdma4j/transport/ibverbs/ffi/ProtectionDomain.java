package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A protection domain ({@code struct ibv_pd}): memory regions and queue pairs created from the
 * same domain may be used together. Owned by its {@link VerbsContext}; owns its
 * {@link MemoryRegion}s and {@link QueuePair}s. Thread-safe as described in {@link VerbsContext}.
 */
public final class ProtectionDomain implements AutoCloseable {

    private final VerbsContext context;
    private final MemorySegment pd;
    private final Resources children = new Resources();
    private final AtomicBoolean closed = new AtomicBoolean();

    private ProtectionDomain(VerbsContext context, MemorySegment pd) {
        this.context = context;
        this.pd = pd;
    }

    static ProtectionDomain allocate(VerbsContext context) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment pd = (MemorySegment) IbvFunctions.ALLOC_PD.invokeExact(state, context.pointer());
            return new ProtectionDomain(context, Calls.checkPointer("ibv_alloc_pd", pd, state, IbvLayouts.IBV_PD.byteSize()));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Registers memory with the device ({@code ibv_reg_mr}): pins its pages and returns the keys
     * that local and remote work requests use. The memory stays owned by the caller and must stay
     * alive until the region is closed; the region keeps a reference to the segment but does not
     * free it.
     *
     * @param segment     native memory, at least one byte
     * @param accessFlags {@code IBV_ACCESS_*} bits of {@link Ibv}, e.g. LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ
     * @return the region, owned by this domain
     * @throws IllegalArgumentException if the segment is on the heap or empty
     * @throws IbverbsException if the call fails; for errno 12 (ENOMEM) the message says that the
     *                          locked-memory limit is the likely cause and gives {@code ulimit -l}
     * @throws IllegalStateException if this domain is closed
     */
    public MemoryRegion register(MemorySegment segment, int accessFlags) {
        Objects.requireNonNull(segment, "segment");
        Calls.checkOpen(closed.get(), "protection domain");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("RDMA needs native memory; got a heap segment of " + segment.byteSize() + " bytes");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        MemoryRegion mr = MemoryRegion.register(this, segment, accessFlags);
        children.add(mr);
        return mr;
    }

    /**
     * Creates a reliable-connected queue pair ({@code ibv_create_qp}, {@code IBV_QPT_RC}) in the
     * RESET state, owned by this domain. Connect it with {@link QueuePair#modifyToInit},
     * {@link QueuePair#modifyToReadyToReceive} and {@link QueuePair#modifyToReadyToSend}.
     *
     * @param init the completion queues and capacities
     * @return the queue pair
     * @throws IllegalArgumentException if a completion queue belongs to another context
     * @throws IbverbsException if the call fails (e.g. capacities above the device's limits)
     * @throws IllegalStateException if this domain or a completion queue is closed
     */
    public QueuePair createReliableConnectedQueuePair(QueuePairInit init) {
        Objects.requireNonNull(init, "init");
        Calls.checkOpen(closed.get(), "protection domain");
        if (init.sendQueue().context() != context || init.receiveQueue().context() != context) {
            throw new IllegalArgumentException("the completion queues must belong to this domain's device context");
        }
        QueuePair qp = QueuePair.create(this, init);
        children.add(qp);
        return qp;
    }

    VerbsContext context() {
        return context;
    }

    MemorySegment pointer() {
        return pd;
    }

    void removed(AutoCloseable child) {
        children.remove(child);
    }

    /**
     * Closes the queue pairs and memory regions still open, then the domain
     * ({@code ibv_dealloc_pd}). Idempotent.
     *
     * @throws IbverbsException if a child or the domain fails to close (the domain then stays
     *                          open, so a later close can retry)
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            children.closeAll();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
                Calls.check("ibv_dealloc_pd", (int) IbvFunctions.DEALLOC_PD.invokeExact(state, pd), state);
            }
        } catch (Throwable t) {
            closed.set(false);
            throw Downcalls.rethrow(t);
        }
        context.removed(this);
    }
}
