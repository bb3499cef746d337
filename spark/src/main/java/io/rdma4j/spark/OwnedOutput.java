package io.rdma4j.spark;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.lang.foreign.MemorySegment;

/**
 * A map output this process registered: its memory (a mapping of the data file, or a copy)
 * and its token. {@link #close()} releases the registration, then frees the memory, once no
 * reducer of this process reads the memory any more ({@link #hold()}).
 */
final class OwnedOutput implements AutoCloseable {
    private final RdmaManager manager;
    private final MemorySegment segment;
    private final RdmaRemoteBuffer remote;
    private final AutoCloseable memory;
    private final Holds holds = new Holds(this::free);

    OwnedOutput(RdmaManager manager, MemorySegment segment, RdmaRemoteBuffer remote, AutoCloseable memory) {
        this.manager = manager;
        this.segment = segment;
        this.remote = remote;
        this.memory = memory;
    }

    /** @return the map output's bytes (offset 0 is the data file's first byte) */
    MemorySegment segment() {
        return segment;
    }

    RdmaRemoteBuffer remote() {
        return remote;
    }

    /** @see Holds#hold() (a local reader: the memory stays valid until its unhold, even if closed meanwhile) */
    boolean hold() {
        return holds.hold();
    }

    void unhold() throws Exception {
        holds.unhold();
    }

    /** Releases the registration and frees the memory, exactly once: now, or when the last local reader's hold ends. */
    @Override
    public void close() throws Exception {
        holds.close();
    }

    /**
     * Releases the registration (waiting up to a minute, as {@link RdmaBuffer#close()} does),
     * then frees the memory: a mapping is unmapped only once no transport reads it any more.
     */
    private void free() throws Exception {
        if (memory instanceof RdmaBuffer buffer) {
            buffer.close();
            return;
        }
        try {
            ExecutorShuffleState.await(manager.release(remote), "release buffer " + remote.id());
        } finally {
            memory.close();
        }
    }
}
