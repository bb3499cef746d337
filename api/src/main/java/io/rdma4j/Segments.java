package io.rdma4j;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/** The checks every segment passes before the manager or a transport touches it. */
final class Segments {

    /** A thread that never starts: only segments every thread may access are accessible by it. */
    private static final Thread ANY_OTHER_THREAD = Thread.ofPlatform().unstarted(() -> { });

    private Segments() {
    }

    /** Whether every thread may access {@code segment} (not confined to its owner thread). */
    static boolean isShared(MemorySegment segment) {
        return segment.isAccessibleBy(ANY_OTHER_THREAD);
    }

    /** For {@link RdmaManager#register}: native, non-empty, alive and shared (read-only: a read-only registration). */
    static void checkRegistrable(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("RDMA needs native memory: heap segments cannot be registered "
                    + "(allocate with an Arena, or use RdmaManager.allocate)");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register a zero-length segment");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException("cannot register a segment whose arena is closed");
        }
        if (!isShared(segment)) {
            throw new IllegalArgumentException("cannot register a thread-confined segment: transports access it "
                    + "from their own threads; allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
    }

    /** For the local side of an op: native, non-empty, alive and shared. */
    static void checkLocal(MemorySegment local) {
        Objects.requireNonNull(local, "local");
        if (!local.isNative()) {
            throw new IllegalArgumentException("RDMA needs native memory: the local segment is on the heap");
        }
        if (local.byteSize() == 0) {
            throw new IllegalArgumentException("the local segment is empty");
        }
        if (!local.scope().isAlive()) {
            throw new IllegalArgumentException("the local segment's arena is closed");
        }
        if (!isShared(local)) {
            throw new IllegalArgumentException("the local segment is thread-confined: transports access it from "
                    + "their own threads; allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
    }
}
