package io.rdma4j.internal.registration;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.LocalMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One registered segment. Created and released only by the registration thread; pinned by
 * transports serving remote requests on any thread.
 *
 * <p>Lifetime of owned memory ({@code ownedArena != null}): the arena is closed exactly once,
 * after (a) {@link #markReleased()} refused new pins, (b) {@link #transportsReleased()} said every
 * transport forgot the id, and (c) the last open pin closed; whichever of (b) and (c) happens last
 * closes it, on its own thread.
 */
public final class Registration implements LocalBuffer {

    private final long id;
    private final MemorySegment segment;
    private final boolean readOnly;
    private final byte[] accessKey;
    private final Arena ownedArena;
    private final List<String> transports;
    private final Map<String, LocalMemory> localMemory;
    private final AtomicInteger pins = new AtomicInteger();
    private final AtomicBoolean freed = new AtomicBoolean();
    private volatile boolean released;
    private volatile boolean transportsReleased;

    /**
     * A registration.
     *
     * @param id          the buffer id
     * @param segment     the registered memory
     * @param accessKey   its secret; copied
     * @param ownedArena  the manager's arena for memory it allocated, or {@code null} for caller-owned memory
     * @param transports  the names of the transports that took the memory, in priority order
     * @param localMemory per transport name, the handle its registration offers for local use of
     *                    this memory in ops (owned by the transport, valid until it released the id)
     */
    public Registration(long id, MemorySegment segment, byte[] accessKey, Arena ownedArena, List<String> transports,
                        Map<String, LocalMemory> localMemory) {
        this.id = id;
        this.segment = segment;
        this.readOnly = segment.isReadOnly();
        this.accessKey = accessKey.clone();
        this.ownedArena = ownedArena;
        this.transports = List.copyOf(transports);
        this.localMemory = Map.copyOf(localMemory);
    }

    /** The names of the transports that took the memory, in priority order. */
    public List<String> transports() {
        return transports;
    }

    /** What {@code transport}'s registration offers for local use of this memory, or {@code null}. */
    public LocalMemory localMemory(String transport) {
        return localMemory.get(transport);
    }

    @Override
    public long id() {
        return id;
    }

    @Override
    public long byteSize() {
        return segment.byteSize();
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    /** Registered from a read-only segment: remote writes are refused. */
    @Override
    public boolean readOnly() {
        return readOnly;
    }

    byte[] accessKey() {
        return accessKey;
    }

    /** Whether the manager allocated the memory (and frees it). */
    public boolean isOwned() {
        return ownedArena != null;
    }

    @Override
    public Pin pin() {
        pins.incrementAndGet();
        if (released) {
            unpin();
            throw RegistrationTable.denied(id);
        }
        if (!segment.scope().isAlive()) {
            unpin();
            throw new BufferAccessException(BufferAccessException.Reason.CLOSED, id,
                    "buffer " + id + ": the owner closed the arena of its memory without releasing it first");
        }
        return new OnePin();
    }

    private void unpin() {
        if (pins.decrementAndGet() == 0) {
            maybeFree();
        }
    }

    /** Step (a): no new pins from now on. */
    public void markReleased() {
        released = true;
    }

    /** Step (b): every transport forgot the id. */
    public void transportsReleased() {
        transportsReleased = true;
        maybeFree();
    }

    /** Whether the memory is free (owned) or handed back to its owner (caller-owned). */
    public boolean isFreed() {
        return freed.get();
    }

    private void maybeFree() {
        if (transportsReleased && pins.get() == 0 && freed.compareAndSet(false, true) && ownedArena != null) {
            ownedArena.close();
        }
    }

    private final class OnePin implements Pin {
        private final AtomicBoolean closed = new AtomicBoolean();

        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                unpin();
            }
        }
    }
}
