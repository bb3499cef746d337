package io.rdma4j.spark;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The memory a process's reducers read remote blocks into (one per {@link ExecutorShuffleState}):
 * buffers of the staging size ({@code spark.rdma4j.shuffle.fetchBufferSize}), allocated once and
 * reused by every later reader. Nothing larger is ever allocated: a block larger than the staging
 * size is read in staging-size pieces ({@link PiecedRead}).
 *
 * <p>Ownership: a buffer taken is the taker's until it gives it back, after which it may be
 * handed to the next taker; {@link #close()} frees every buffer (one out at that moment is freed
 * with them: its taker must not touch it after close).
 */
final class StagingBuffers implements AutoCloseable {

    private final long size;
    private final Arena arena = Arena.ofShared();
    private final Deque<MemorySegment> free = new ArrayDeque<>();
    private long allocated;
    private boolean closed;

    /** @param size bytes of one staging buffer */
    StagingBuffers(long size) {
        this.size = size;
    }

    /**
     * A staging buffer for {@code bytes}, a reused one when one is free. A new buffer's pages are
     * faulted in and zeroed on first use (about 11 us per 4 KiB page on the project's 2-vCPU VM):
     * what the reuse saves.
     *
     * @throws IllegalArgumentException when {@code bytes} exceeds the staging size
     * @throws IllegalStateException when closed
     */
    synchronized MemorySegment take(long bytes) {
        if (bytes > size) {
            throw new IllegalArgumentException(bytes + " B do not fit a staging buffer of " + size + " B");
        }
        if (closed) {
            throw new IllegalStateException("rdma4j shuffle staging buffers are closed");
        }
        MemorySegment segment = free.pollFirst();
        if (segment == null) {
            allocated += size;
            segment = arena.allocate(size, 64);
        }
        return segment;
    }

    /** Gives a buffer back once no transport touches it any more; after close it is dropped (freed with the arena). */
    synchronized void give(MemorySegment buffer) {
        if (!closed) {
            free.addFirst(buffer);
        }
    }

    /** @return bytes allocated so far (a reused buffer counts once) */
    synchronized long allocatedBytes() {
        return allocated;
    }

    /** Frees every buffer; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        free.clear();
        arena.close();
    }
}
