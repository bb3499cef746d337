package io.rdma4j.unix;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** This process's resource limits ({@code getrlimit(2)}), as error messages quote them. */
public final class ResourceLimits {

    /** {@code RLIMIT_MEMLOCK} on Linux ({@code <bits/resource.h>}). */
    private static final int RLIMIT_MEMLOCK = 8;
    /** {@code RLIM_INFINITY}: all bits set. */
    private static final long RLIM_INFINITY = -1L;

    private ResourceLimits() {
    }

    /**
     * The soft locked-memory limit as {@code ulimit -l} prints it: KiB, or {@code "unlimited"}.
     * Never throws.
     *
     * @return e.g. {@code "8192"}, {@code "unlimited"}, or {@code "unknown"} if {@code getrlimit} fails
     */
    public static String lockedMemory() {
        try (Arena arena = Arena.ofConfined()) {
            // struct rlimit { rlim_t rlim_cur, rlim_max; }
            MemorySegment limit = arena.allocate(JAVA_LONG, 2);
            if ((int) Getrlimit.HANDLE.invokeExact(RLIMIT_MEMLOCK, limit) != 0) {
                return "unknown";
            }
            long current = limit.get(JAVA_LONG, 0);
            return current == RLIM_INFINITY ? "unlimited" : Long.toUnsignedString(current / 1024);
        } catch (Throwable t) {
            return "unknown";
        }
    }

    /** {@code int getrlimit(int resource, struct rlimit *rlim);} bound on first use. */
    private static final class Getrlimit {
        static final MethodHandle HANDLE = Downcalls.libc("getrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    }
}
