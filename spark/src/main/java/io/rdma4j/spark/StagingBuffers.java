package io.rdma4j.spark;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The memory a process's reducers read remote blocks into (one per {@link ExecutorShuffleState}):
 * buffers of the staging size ({@code spark.rdma4j.shuffle.fetchBufferSize}), reused, and
 * buffers of their own for an action larger than that (a block larger than the staging size),
 * rounded up to a quarter of the staging size and reused too, within a bound ({@link #LARGE_KEPT}).
 *
 * <p>Ownership: a buffer taken is the taker's until it gives it back, after which it may be
 * handed to the next taker; {@link #close()} frees every buffer this object holds (buffers out
 * at that moment are freed when given back).
 */
final class StagingBuffers implements AutoCloseable {

    /**
     * Memory a reducer reads into: a {@link #segment} of at least the bytes asked for.
     *
     * @param arena the segment's own arena (a buffer larger than the staging size), or null for a
     *              buffer of the shared staging arena
     */
    record Staging(MemorySegment segment, Arena arena) {
    }

    private final long size;
    private final Arena arena = Arena.ofShared();
    private final Deque<MemorySegment> free = new ArrayDeque<>();
    /**
     * How many staging sizes of larger buffers are kept for reuse (64 MiB with the default 8 MiB):
     * two per reduce task for a few tasks at a time when blocks are 2 to 4 staging sizes (a 1 GB
     * sort by 8 map tasks into 8 partitions reads blocks of 16 MB). A fresh buffer costs a page
     * fault per 4 KiB page on first touch (about 11 us each on the project's 2-vCPU VM) and its zeroing.
     */
    static final int LARGE_KEPT = 8;
    /** Larger buffers given back, kept for reuse. */
    private final List<Staging> large = new ArrayList<>();
    private long largeBytes;
    private long allocated;
    private boolean closed;

    /** @param size bytes of one staging buffer */
    StagingBuffers(long size) {
        this.size = size;
    }

    /**
     * A buffer for {@code bytes}: one of the staging size when they fit, else one of its own.
     *
     * @throws IllegalStateException when closed
     */
    synchronized Staging take(long bytes) {
        if (closed) {
            throw new IllegalStateException("rdma4j shuffle staging buffers are closed");
        }
        if (bytes <= size) {
            MemorySegment segment = free.pollFirst();
            if (segment == null) {
                allocated += size;
                segment = arena.allocate(size, 64);
            }
            return new Staging(segment, null);
        }
        Staging best = null;
        for (Staging s : large) {
            if (s.segment().byteSize() >= bytes && (best == null || s.segment().byteSize() < best.segment().byteSize())) {
                best = s;
            }
        }
        if (best != null) {
            large.remove(best);
            largeBytes -= best.segment().byteSize();
            return best;
        }
        // a new buffer's pages are faulted in and zeroed on first use: what reuse saves
        long grain = Math.max(4096, size / 4);
        long rounded = (bytes + grain - 1) / grain * grain;
        Arena own = Arena.ofShared();
        try {
            MemorySegment segment = own.allocate(rounded, 64);
            allocated += rounded;
            return new Staging(segment, own);
        } catch (RuntimeException | OutOfMemoryError e) {
            own.close();
            throw e;
        }
    }

    /**
     * Gives a buffer back once no transport touches it any more. A buffer larger than the
     * staging size is kept for the next large take, the kept ones within {@value #LARGE_KEPT}
     * staging sizes in all (the smallest kept ones are freed to make room); one larger than that
     * bound, or any once closed, is freed.
     */
    synchronized void give(Staging buffer) {
        if (buffer.arena() == null) {
            if (!closed) {
                free.addFirst(buffer.segment());
            }
        } else if (!closed && buffer.segment().byteSize() <= LARGE_KEPT * size) {
            // room for it by freeing smaller kept ones first: the kept buffers follow the blocks' sizes
            large.sort(java.util.Comparator.comparingLong(b -> b.segment().byteSize()));
            while (largeBytes + buffer.segment().byteSize() > LARGE_KEPT * size) {
                Staging smallest = large.removeFirst();
                largeBytes -= smallest.segment().byteSize();
                smallest.arena().close();
            }
            large.add(buffer);
            largeBytes += buffer.segment().byteSize();
        } else {
            buffer.arena().close();
        }
    }

    /** @return bytes allocated so far (a reused buffer counts once) */
    synchronized long allocatedBytes() {
        return allocated;
    }

    /** Frees every buffer held; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        free.clear();
        arena.close();
        large.forEach(b -> b.arena().close());
        large.clear();
        largeBytes = 0;
    }
}
