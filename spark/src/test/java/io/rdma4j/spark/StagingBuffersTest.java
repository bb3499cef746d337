package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** The reducers' staging memory: buffers of one size, reused; nothing larger is ever allocated. */
class StagingBuffersTest {

    private static final long SIZE = 4096;

    @Test
    void aBufferGivenBackServesTheNextTake() {
        try (StagingBuffers buffers = new StagingBuffers(SIZE)) {
            StagingBuffers.Staging first = buffers.take(SIZE);
            buffers.give(first);
            StagingBuffers.Staging second = buffers.take(100);
            assertEquals(first.segment().address(), second.segment().address());
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
        StagingBuffers.Staging out = buffers.take(SIZE);
        buffers.close();
        buffers.give(out);       // freed with the arena, not kept
        assertThrows(IllegalStateException.class, () -> buffers.take(1));
    }
}
