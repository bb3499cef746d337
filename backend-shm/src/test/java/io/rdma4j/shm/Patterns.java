package io.rdma4j.shm;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/** Deterministic test data: byte {@code i} of pattern {@code seed} is {@code i * 31 + seed}. */
final class Patterns {

    private Patterns() {
    }

    static MemorySegment fill(MemorySegment s, long seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return s;
    }

    /** The first index where {@code s} differs from pattern {@code seed}, or -1. */
    static long mismatch(MemorySegment s, long seed) {
        for (long i = 0; i < s.byteSize(); i++) {
            if (s.get(JAVA_BYTE, i) != (byte) (i * 31 + seed)) {
                return i;
            }
        }
        return -1;
    }

    static long crc(MemorySegment s) {
        CRC32C crc = new CRC32C();
        crc.update(s.asByteBuffer());
        return crc.getValue();
    }
}
