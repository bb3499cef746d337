package io.rdma4j.ibverbs.ffi;

import java.lang.foreign.MemorySegment;

/** Small helpers shared by the owning classes of this package. */
final class Calls {

    private Calls() {
    }

    /**
     * Throws when an int-returning verb failed. Verbs return 0 on success and either an errno
     * value or -1 with {@code errno} set on failure; both are reported as the errno.
     */
    static void check(String function, int result, MemorySegment captureState) {
        if (result != 0) {
            int errno = result > 0 ? result : IbvFunctions.errno(captureState);
            throw IbverbsException.failed(function, errno == 0 ? -result : errno, "");
        }
    }

    /** Throws when a pointer-returning verb returned NULL. */
    static MemorySegment checkPointer(String function, MemorySegment result, MemorySegment captureState, long size) {
        if (result.address() == 0) {
            throw IbverbsException.failed(function, IbvFunctions.errno(captureState), "");
        }
        return result.reinterpret(size);
    }

    /** Wraps what {@code invokeExact} may throw: downcalls declare Throwable but only throw unchecked. */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    static void checkOpen(boolean closed, String what) {
        if (closed) {
            throw new IllegalStateException(what + " is closed");
        }
    }
}
