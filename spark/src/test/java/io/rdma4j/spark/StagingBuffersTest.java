package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The reducers' staging memory: buffers larger than the staging size are kept for reuse, within a bound. */
class StagingBuffersTest {

    private static final long SIZE = 4096;

    @Test
    void aLargerBufferGivenBackServesTheNextLargeTakeThatFitsIt() {
        try (StagingBuffers buffers = new StagingBuffers(SIZE)) {
            StagingBuffers.Staging first = buffers.take(9000);
            assertTrue(first.segment().byteSize() >= 9000);
            long allocated = buffers.allocatedBytes();
            buffers.give(first);
            StagingBuffers.Staging second = buffers.take(8000);
            assertEquals(first.segment().address(), second.segment().address());
            assertEquals(allocated, buffers.allocatedBytes());
            buffers.give(second);
        }
    }

    @Test
    void theSmallestKeptBuffersAreFreedToKeepALargerOneWithinTheBound() {
        try (StagingBuffers buffers = new StagingBuffers(SIZE)) {
            // the bound: LARGE_KEPT staging sizes (32 KiB here); two of 12 KiB kept, then one of 16 KiB given back
            StagingBuffers.Staging a = buffers.take(12 * 1024);
            StagingBuffers.Staging b = buffers.take(12 * 1024);
            StagingBuffers.Staging c = buffers.take(16 * 1024);
            buffers.give(a);
            buffers.give(b);
            buffers.give(c);
            long allocated = buffers.allocatedBytes();
            StagingBuffers.Staging again = buffers.take(16 * 1024);
            assertEquals(c.segment().address(), again.segment().address(), "the 16 KiB buffer was kept");
            assertEquals(allocated, buffers.allocatedBytes());
            buffers.give(again);
        }
    }

    @Test
    void aTakeAfterCloseIsRefused() {
        StagingBuffers buffers = new StagingBuffers(SIZE);
        StagingBuffers.Staging out = buffers.take(3 * SIZE);
        buffers.close();
        buffers.give(out);       // freed, not kept
        assertThrows(IllegalStateException.class, () -> buffers.take(1));
    }
}
