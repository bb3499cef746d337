package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

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
            int errno = result > 0 ? result : Downcalls.errno(captureState);
            throw IbverbsException.failed(function, errno == 0 ? -result : errno, "");
        }
    }

    /** Throws when a pointer-returning verb returned NULL. */
    static MemorySegment checkPointer(String function, MemorySegment result, MemorySegment captureState, long size) {
        if (result.address() == 0) {
            throw IbverbsException.failed(function, Downcalls.errno(captureState), "");
        }
        return result.reinterpret(size);
    }

    /**
     * Calls a destroy verb ({@code ibv_dereg_mr}, {@code ibv_destroy_qp}, ...) on {@code handle}, once
     * {@code closed} moved from false to true; when the verb fails, {@code closed} goes back to false
     * (the object stays open and may be closed again) and the failure is thrown.
     *
     * @return {@code false} if the object was already closed and nothing was called
     */
    static boolean destroyOnce(AtomicBoolean closed, String function, MethodHandle destroy, MemorySegment handle) {
        if (!closed.compareAndSet(false, true)) {
            return false;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            check(function, (int) destroy.invokeExact(state, handle), state);
        } catch (Throwable t) {
            closed.set(false);
            throw Downcalls.rethrow(t);
        }
        return true;
    }

    static void checkOpen(boolean closed, String what) {
        if (closed) {
            throw new IllegalStateException(what + " is closed");
        }
    }
}
