package io.rdma4j.bench.cli;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * The bytes both rdma-perf processes fill their buffers with, so a read can be checked against
 * what the reader itself holds. Position-dependent, so a shifted or truncated transfer shows.
 */
final class TestPattern {

    private static final ValueLayout.OfLong WORD = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private TestPattern() {
    }

    /** Fills {@code segment} with the pattern for offsets {@code 0..byteSize-1}. */
    static void fill(MemorySegment segment) {
        long size = segment.byteSize();
        long words = size / Long.BYTES;
        for (long w = 0; w < words; w++) {
            segment.set(WORD, w * Long.BYTES, word(w));
        }
        // The tail bytes continue the little-endian word they would belong to.
        for (long i = words * Long.BYTES; i < size; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (word(i / Long.BYTES) >>> (8 * (i % Long.BYTES))));
        }
    }

    private static long word(long index) {
        long z = index * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L; // SplitMix64 finaliser
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
