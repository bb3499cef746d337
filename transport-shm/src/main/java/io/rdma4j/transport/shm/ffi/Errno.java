package io.rdma4j.transport.shm.ffi;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Linux {@code errno} values this module acts on, and their text from the C library's
 * {@code strerror(3)}, cached per value.
 */
@SuppressWarnings("restricted")     // reading strerror's NUL-terminated text needs a size
public final class Errno {

    /** Operation not permitted: the kernel's ptrace access check refused. */
    public static final int EPERM = 1;
    /** No such process: the peer exited. */
    public static final int ESRCH = 3;
    /** Interrupted system call: a signal arrived first. */
    public static final int EINTR = 4;
    /** Bad address: the remote range is not (or no longer) mapped. */
    public static final int EFAULT = 14;
    /** Invalid argument: e.g. {@code PR_SET_PTRACER} without Yama. */
    public static final int EINVAL = 22;
    /** Function not implemented: a kernel built without cross-memory attach. */
    public static final int ENOSYS = 38;

    private static final ConcurrentHashMap<Integer, String> TEXTS = new ConcurrentHashMap<>();

    private Errno() {
    }

    /**
     * {@code "errno 1 (Operation not permitted)"}; the parenthesis is left out when
     * {@code strerror} cannot be called.
     *
     * @param errno the value
     * @return the value and its text; never throws
     */
    public static String describe(int errno) {
        return TEXTS.computeIfAbsent(errno, Errno::lookUp);
    }

    private static String lookUp(int errno) {
        try {
            MemorySegment text;
            synchronized (Errno.class) {    // strerror may share one static buffer between threads
                text = (MemorySegment) Strerror.HANDLE.invokeExact(errno);
                if (text.address() != 0) {
                    return "errno " + errno + " (" + text.reinterpret(1024).getString(0) + ")";
                }
            }
        } catch (Throwable t) {  // a binding failure must not hide the error being described
            // fall through
        }
        return "errno " + errno;
    }

    /** {@code char *strerror(int errnum);} bound on first use. */
    private static final class Strerror {
        static final MethodHandle HANDLE = Libc.downcall("strerror",
                java.lang.foreign.FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }
}
