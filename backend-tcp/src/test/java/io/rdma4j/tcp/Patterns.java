package io.rdma4j.tcp;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.zip.CRC32;

/** Deterministic data patterns for transfers, and cheap ways to compare them. */
final class Patterns {

    private Patterns() {
    }

    /** Fills {@code segment} with a pattern that differs at every offset and for every seed. */
    static void fill(MemorySegment segment, long seed) {
        long n = segment.byteSize();
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        long i = 0;
        for (; i + 8 <= n; i += 8) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, x ^ i);
        }
        for (; i < n; i++) {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte) (seed * 131 + i * 31 + 7));
        }
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
