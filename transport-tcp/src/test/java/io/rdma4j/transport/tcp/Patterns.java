package io.rdma4j.transport.tcp;

import io.rdma4j.testing.DataPattern;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32;

/** Deterministic data patterns for transfers, and cheap ways to compare them. */
final class Patterns {

    private Patterns() {
    }

    /** Fills {@code segment} with a pattern that differs at every offset and for every seed ({@link DataPattern}). */
    static void fill(MemorySegment segment, long seed) {
        DataPattern.fill(segment, seed);
    }

    /** CRC-32 of the whole segment (at most 2 GiB), read straight from native memory. */
    static long crc(MemorySegment segment) {
        CRC32 crc = new CRC32();
        crc.update(segment.asByteBuffer());
        return crc.getValue();
    }

    /** Offset of the first difference between the first {@code length} bytes of both, or -1. */
    static long mismatch(MemorySegment a, MemorySegment b, long length) {
        return MemorySegment.mismatch(a, 0, length, b, 0, length);
    }
}
