package io.rdma4j.unix;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The Linux (x86-64 and arm64) {@code errno} values rdma4j acts on, and their text from the C
 * library's {@code strerror(3)}, looked up once per value. Never throws: the text is there to
 * describe another failure, which a broken binding must not hide.
 */
@SuppressWarnings("restricted")     // strerror's NUL-terminated text is read through a sized view
public final class Errno {

    /** Operation not permitted: e.g. the kernel's ptrace access check refused. */
    public static final int EPERM = 1;
    /** No such process: the peer exited. */
    public static final int ESRCH = 3;
    /** Interrupted system call: a signal arrived first. */
    public static final int EINTR = 4;
    /** Bad file descriptor. */
    public static final int EBADF = 9;
    /** Resource temporarily unavailable: a non-blocking call would block. */
    public static final int EAGAIN = 11;
    /** Cannot allocate memory: also what pinning beyond the locked-memory limit reports. */
    public static final int ENOMEM = 12;
    /** Bad address: the range is not (or no longer) mapped. */
    public static final int EFAULT = 14;
    /** Invalid argument. */
    public static final int EINVAL = 22;
    /** Function not implemented: the kernel lacks the call. */
    public static final int ENOSYS = 38;

    private static final String UNKNOWN = "unknown error";
    private static final ConcurrentHashMap<Integer, String> TEXTS = new ConcurrentHashMap<>();

    private Errno() {
    }

    /**
     * The C library's text for {@code errno}, e.g. {@code "Operation not permitted"} (glibc's
     * for a value it does not know: {@code "Unknown error 4242"}).
     *
     * @return the text, or {@code "unknown error"} when there is none or {@code strerror} cannot
     *         be called
     */
    public static String text(int errno) {
        return TEXTS.computeIfAbsent(errno, Errno::lookUp);
    }

    /**
     * {@code "errno 1 (Operation not permitted)"}, or {@code "errno 1"} when there is no text.
     *
     * @return the value and its text
     */
    public static String describe(int errno) {
        String text = text(errno);
        return UNKNOWN.equals(text) ? "errno " + errno : "errno " + errno + " (" + text + ")";
    }

    private static String lookUp(int errno) {
        try {
            synchronized (Errno.class) {    // strerror may share one static buffer between threads
                MemorySegment text = (MemorySegment) Strerror.HANDLE.invokeExact(errno);
                if (text.address() != 0) {
                    String s = text.reinterpret(1024).getString(0);
                    return s.isEmpty() ? UNKNOWN : s;
                }
            }
        } catch (Throwable t) {     // a binding failure must not hide the error being described
            // fall through
        }
        return UNKNOWN;
    }

    /** {@code char *strerror(int errnum);} bound on first use. */
    private static final class Strerror {
        static final MethodHandle HANDLE = Downcalls.libc("strerror", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    }
}
