package io.rdma4j.transport.ibverbs.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The libc calls behind error messages: {@code strerror} and {@code getrlimit(RLIMIT_MEMLOCK)}.
 * Independent of libibverbs, so messages work even when the library is missing. Never throws.
 */
@SuppressWarnings("restricted")
final class Libc {

    private Libc() {
    }

    /** {@code ENOMEM}: what {@code ibv_reg_mr} reports when pinning exceeds the locked-memory limit. */
    static final int ENOMEM = 12;

    /** {@code RLIMIT_MEMLOCK} on Linux x86-64 ({@code <bits/resource.h>}). */
    private static final int RLIMIT_MEMLOCK = 8;

    /** {@code RLIM_INFINITY}: all bits set. */
    private static final long RLIM_INFINITY = -1L;

    private static final Linker LINKER = Linker.nativeLinker();
    // char *strerror(int errnum);
    private static final MethodHandle STRERROR = handle("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    // int getrlimit(int resource, struct rlimit *rlim);  struct rlimit { rlim_t rlim_cur, rlim_max; }
    private static final MethodHandle GETRLIMIT = handle("getrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    /**
     * libc's text for an errno value, e.g. "Cannot allocate memory".
     *
     * @return the text, or "unknown error" if libc gives none
     */
    static String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.address() == 0 ? "unknown error" : text.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "unknown error";
        }
    }

    /**
     * The soft locked-memory limit of this process as {@code ulimit -l} prints it: KiB, or
     * "unlimited".
     *
     * @return e.g. "8192", "unlimited", or "unknown" if {@code getrlimit} fails
     */
    static String lockedMemoryLimit() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment limit = arena.allocate(JAVA_LONG, 2);
            if ((int) GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, limit) != 0) {
                return "unknown";
            }
            long current = limit.get(JAVA_LONG, 0);
            return current == RLIM_INFINITY ? "unlimited" : Long.toUnsignedString(current / 1024);
        } catch (Throwable t) {
            return "unknown";
        }
    }

    private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(
                () -> new UnsatisfiedLinkError("libc has no symbol " + name)), descriptor);
    }
}
