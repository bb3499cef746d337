package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;

import org.junit.jupiter.api.Test;

/** The reducers' staging memory: buffers of one size, reused; nothing larger is ever allocated. */
class StagingBuffersTest {

    private static final long SIZE = 4096;

    @Test
    void aBufferGivenBackServesTheNextTake() {
        try (StagingBuffers buffers = new StagingBuffers(SIZE)) {
            MemorySegment first = buffers.take(SIZE);
            buffers.give(first);
            MemorySegment second = buffers.take(100);
            assertEquals(first.address(), second.address());
            assertEquals(SIZE, buffers.allocatedBytes());
            buffers.give(second);
        }
    }

    @Test
    void aTakeLargerThanTheStagingSizeIsRefused() {
        try (StagingBuffers buffers = new StagingBuffers(SIZE)) {
            assertThrows(IllegalArgumentException.class, () -> buffers.take(SIZE + 1));
            assertEquals(0, buffers.allocatedBytes());
        }
    }

    @Test
    void aTakeAfterCloseIsRefused() {
        StagingBuffers buffers = new StagingBuffers(SIZE);
        MemorySegment out = buffers.take(SIZE);
        buffers.close();
        buffers.give(out);       // freed with the arena, not kept
        assertThrows(IllegalStateException.class, () -> buffers.take(1));
    }
}
