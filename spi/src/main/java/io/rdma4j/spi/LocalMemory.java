package io.rdma4j.spi;

import java.lang.foreign.MemorySegment;

/**
 * A caller's local memory as prepared by {@link Transport#prepareLocal} (verbs: a memory region
 * with its lkey). Transports implement it with whatever their ops need and read it back from
 * {@link TransportOp#localMemory()}.
 *
 * <p>The manager owns the handle: it caches it, hands it to ops (which may use it concurrently),
 * and closes it exactly once, when it is evicted or the segment's arena closed and no op uses it
 * any more.
 */
public interface LocalMemory extends AutoCloseable {

    /**
     * The memory that was prepared; ops hand in this segment or a part of it.
     *
     * @return the prepared segment, owned by the caller
     */
    MemorySegment segment();

    /** Frees what preparation created. Called once by the manager; must not throw. */
    @Override
    void close();
}
