package io.rdma4j.transport.shm;

import io.rdma4j.testing.DataPattern;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/** Deterministic test data ({@link DataPattern}) and its checksum. */
final class Patterns {

    private Patterns() {
    }

    static MemorySegment fill(MemorySegment s, long seed) {
        return DataPattern.fill(s, seed);
    }

    /** Where {@code s} first differs from pattern {@code seed} (see {@link DataPattern#mismatch}), or -1. */
    static long mismatch(MemorySegment s, long seed) {
        return DataPattern.mismatch(s, seed);
    }

    static long crc(MemorySegment s) {
        CRC32C crc = new CRC32C();
        crc.update(s.asByteBuffer());
        return crc.getValue();
    }
}
