package io.rdma4j.transport.ibverbs.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_SGE;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A preallocated native array of work requests ({@code struct ibv_send_wr} or
 * {@code struct ibv_recv_wr}), each with its own block of scatter/gather entries. Built once: the
 * {@code next} pointers chain request i to i + 1 and each {@code sg_list} points at its block, so
 * posting the first {@code count} requests only cuts the chain after {@code count - 1} for the
 * duration of the call. Owns its memory (a shared arena). Not thread-safe: one poster at a time.
 */
abstract sealed class WorkRequestArray implements AutoCloseable permits SendWorkRequests, ReceiveWorkRequests {

    static final long SGE_SIZE = IBV_SGE.byteSize();
    static final long SGE_ADDR = offset(IBV_SGE, "addr");
    static final long SGE_LENGTH = offset(IBV_SGE, "length");
    static final long SGE_LKEY = offset(IBV_SGE, "lkey");

    private final Arena arena;
    final MemorySegment requests;
    final MemorySegment sges;
    private final MemorySegment badRequest;
    final long requestSize;
    private final long nextOffset;
    final long numSgeOffset;
    private final int capacity;
    private final int sgesPerRequest;
    private final AtomicBoolean closed = new AtomicBoolean();

    WorkRequestArray(StructLayout layout, int capacity, int sgesPerRequest) {
        if (capacity < 1 || sgesPerRequest < 1) {
            throw new IllegalArgumentException("need at least one request and one SGE per request, got " + capacity
                    + " requests of " + sgesPerRequest + " SGEs");
        }
        this.arena = Arena.ofShared();
        this.requests = arena.allocate(layout, capacity);
        this.sges = arena.allocate(IBV_SGE, (long) capacity * sgesPerRequest);
        this.badRequest = arena.allocate(ADDRESS);
        this.requestSize = layout.byteSize();
        this.nextOffset = offset(layout, "next");
        this.numSgeOffset = offset(layout, "num_sge");
        this.capacity = capacity;
        this.sgesPerRequest = sgesPerRequest;
        long sgList = offset(layout, "sg_list");
        for (int i = 0; i < capacity; i++) {
            long at = i * requestSize;
            requests.set(JAVA_LONG, at + nextOffset, i + 1 < capacity ? requests.address() + at + requestSize : 0L);
            requests.set(JAVA_LONG, at + sgList, sges.address() + (long) i * sgesPerRequest * SGE_SIZE);
        }
    }

    /**
     * How many work requests the array holds.
     *
     * @return the capacity given at allocation
     */
    public final int capacity() {
        return capacity;
    }

    /**
     * How many scatter/gather entries each request has room for.
     *
     * @return the number given at allocation
     */
    public final int sgesPerRequest() {
        return sgesPerRequest;
    }

    /**
     * Sets scatter/gather entry {@code j} of request {@code i}: {@code length} bytes at
     * {@code address}, registered under {@code lkey}.
     *
     * @param i       the request, from 0 to capacity - 1
     * @param j       the entry, from 0 to sgesPerRequest - 1
     * @param address the first byte
     * @param length  bytes (an RDMA message may be up to 2^31 bytes)
     * @param lkey    the {@link MemoryRegion#lkey()} covering the bytes
     * @throws IndexOutOfBoundsException if {@code i} or {@code j} is out of range
     */
    public final void setSge(int i, int j, long address, int length, int lkey) {
        long at = ((long) Objects.checkIndex(i, capacity) * sgesPerRequest + Objects.checkIndex(j, sgesPerRequest)) * SGE_SIZE;
        touched(i);
        sges.set(JAVA_LONG, at + SGE_ADDR, address);
        sges.set(JAVA_INT, at + SGE_LENGTH, length);
        sges.set(JAVA_INT, at + SGE_LKEY, lkey);
    }

    /** Request {@code i} or its entries are about to be written (a subclass that caches what it wrote forgets it). */
    void touched(int i) {
    }

    /** Throws {@link IllegalStateException} once the array is closed. */
    final void checkOpen() {
        if (closed.get()) {
            throw new IllegalStateException("work requests are closed");
        }
    }

    /** The byte offset of request {@code i}, after checking it. */
    final long requestAt(int i) {
        return Objects.checkIndex(i, capacity) * requestSize;
    }

    final int checkSgeCount(int sgeCount) {
        if (sgeCount < 0 || sgeCount > sgesPerRequest) {
            throw new IndexOutOfBoundsException("SGE count " + sgeCount + " outside [0, " + sgesPerRequest + "]");
        }
        return sgeCount;
    }

    /**
     * Ends the chain at request {@code count - 1} for a post (the last request's chain always ends
     * there), and clears what the last failed post named as refused ({@link #refusedIndex}).
     */
    final void terminateAt(int count) {
        badRequest.set(JAVA_LONG, 0, 0L);
        if (count == capacity) {
            Objects.checkIndex(count - 1, capacity);
            return;
        }
        requests.set(JAVA_LONG, requestAt(count - 1) + nextOffset, 0L);
    }

    /** Restores the link from request {@code count - 1} to {@code count} after a post. */
    final void relink(int count) {
        if (count >= 1 && count < capacity) {
            requests.set(JAVA_LONG, (count - 1) * requestSize + nextOffset, requests.address() + count * requestSize);
        }
    }

    final MemorySegment segment() {
        return requests;
    }

    final MemorySegment badRequest() {
        return badRequest;
    }

    /** The index of the request the driver refused ({@code *bad_wr}), or -1 if it named none. */
    final long badIndex() {
        long bad = badRequest.get(JAVA_LONG, 0);
        return bad == 0 ? -1 : (bad - requests.address()) / requestSize;
    }

    /**
     * After a post from this array failed: the index of the request the driver refused ({@code
     * *bad_wr}); the requests before it were posted, it and those after it were not.
     *
     * @return the index, or -1 when the driver named none (then it is unknown how many were posted)
     */
    public final int refusedIndex() {
        long i = badIndex();
        return i < 0 || i >= capacity ? -1 : (int) i;
    }

    /** Frees the array. Idempotent. Must not race a post from it. */
    @Override
    public final void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
