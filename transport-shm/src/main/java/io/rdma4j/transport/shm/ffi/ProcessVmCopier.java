package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Copies between this process and another one's memory with {@code process_vm_readv} /
 * {@code process_vm_writev} (cross-memory attach: one copy, done by the kernel on the calling
 * thread; the other process does nothing).
 *
 * <p>Owns one local and one remote {@code struct iovec} (of {@code <sys/uio.h>}:
 * {@code { void *iov_base; size_t iov_len; }}) and an {@code errno} capture buffer, allocated
 * once: an op allocates nothing. A copy the kernel cuts short (it stops at the first unmapped
 * remote page, and at {@code MAX_RW_COUNT}, just under 2 GiB, per call) is resumed where it
 * stopped until the whole range moved or an error came back.
 *
 * <p><b>Vectored copies.</b> Many small ranges go in one call: {@link #queue} adds a
 * (local, remote) pair of iovec entries, up to {@link #MAX_IOV}, and {@link #readQueued} /
 * {@link #writeQueued} move them all with one {@code process_vm_readv}/{@code writev}. Those
 * arrays are allocated on the first {@code queue}, once per copier.
 *
 * <p><b>Threading.</b> Not thread-safe: one copier per thread (its iovecs are rewritten by
 * every op). {@link #close()} is idempotent; an op after close throws
 * {@link IllegalStateException}.
 *
 * <p>Calls of at most {@link #CRITICAL_MAX_BYTES} use a {@code Linker.Option.critical} handle:
 * such a copy takes microseconds, so skipping the JVM's thread-state transition is worth it and
 * holding off a safepoint that long harms nobody. Larger ones use the ordinary handle.
 */
@SuppressWarnings("restricted")     // this package is where the restricted FFM calls are meant to live
public final class ProcessVmCopier implements AutoCloseable {

    /** Largest copy made through the critical (no thread-state transition) handles. */
    public static final long CRITICAL_MAX_BYTES = 64 * 1024;

    private static final MemoryLayout IOVEC = MemoryLayout.structLayout(
            ADDRESS.withName("iov_base"), JAVA_LONG.withName("iov_len"));
    private static final long IOV_BASE = IOVEC.byteOffset(MemoryLayout.PathElement.groupElement("iov_base"));
    private static final long IOV_LEN = IOVEC.byteOffset(MemoryLayout.PathElement.groupElement("iov_len"));

    private final Arena arena = Arena.ofShared();
    private final MemorySegment localIov = arena.allocate(IOVEC);
    private final MemorySegment remoteIov = arena.allocate(IOVEC);
    private final MemorySegment callState = arena.allocate(Downcalls.CAPTURE_STATE);
    /** {@code struct pollfd { int fd; short events; short revents; }} of {@code <poll.h>}. */
    private final MemorySegment pollFd = arena.allocate(8, 4);
    private MemorySegment localIovs;        // MAX_IOV entries each, allocated on the first queue()
    private MemorySegment remoteIovs;
    private int queued;
    private long queuedBytes;
    private boolean closed;

    /**
     * The most ranges one vectored call moves: Linux's {@code IOV_MAX} ({@code UIO_MAXIOV}), the
     * limit {@code process_vm_readv} puts on each of its two iovec arrays.
     */
    public static final int MAX_IOV = 1024;

    /** Bytes of {@link #scratch()}. */
    public static final long SCRATCH_BYTES = 64 * 1024;

    private MemorySegment scratch;          // SCRATCH_BYTES, allocated on the first scratch()

    /**
     * This copier's native scratch memory, {@link #SCRATCH_BYTES} bytes, page-aligned, freed at
     * {@link #close()}: where a caller may read a remote range before copying parts of it out.
     *
     * @return the same segment on every call
     * @throws IllegalStateException if this copier is closed
     */
    public MemorySegment scratch() {
        if (closed) {
            throw new IllegalStateException("copier closed");
        }
        if (scratch == null) {
            scratch = arena.allocate(SCRATCH_BYTES, 4096);
        }
        return scratch;
    }

    /** Allocates the iovecs; binds the calls on the first copier of the process. */
    public ProcessVmCopier() {
    }

    /**
     * Copies {@code length} bytes from address {@code remoteAddress} of process {@code pid} into
     * {@code local} at {@code localOffset}.
     *
     * @param pid           the other process (or this one)
     * @param local         where the bytes go; native and alive, owned by the caller, who keeps it
     *                      alive for the duration of the call
     * @param localOffset   offset into {@code local}
     * @param remoteAddress the address in the other process
     * @param length        bytes to copy; 0 does nothing
     * @return 0 when every byte moved, otherwise the {@code errno} of the failing call
     *         ({@link Errno#EPERM}: no ptrace permission; {@link Errno#ESRCH}: no such process;
     *         {@link Errno#EFAULT}: the remote range is not mapped); bytes before the failure may
     *         have moved
     * @throws IndexOutOfBoundsException if the range exceeds {@code local}
     * @throws IllegalArgumentException  if {@code local} is not native
     * @throws IllegalStateException     if {@code local}'s arena is closed or this copier is
     */
    public int read(long pid, MemorySegment local, long localOffset, long remoteAddress, long length) {
        return copy(false, pid, local, localOffset, remoteAddress, length);
    }

    /**
     * Copies {@code length} bytes of {@code local} at {@code localOffset} to address
     * {@code remoteAddress} of process {@code pid}. Same parameters, result and exceptions as
     * {@link #read}, in the other direction.
     *
     * @param pid           the other process (or this one)
     * @param local         where the bytes come from; native and alive, owned by the caller
     * @param localOffset   offset into {@code local}
     * @param remoteAddress the address in the other process
     * @param length        bytes to copy; 0 does nothing
     * @return 0 when every byte moved, otherwise the {@code errno} of the failing call
     */
    public int write(long pid, MemorySegment local, long localOffset, long remoteAddress, long length) {
        return copy(true, pid, local, localOffset, remoteAddress, length);
    }

    private int copy(boolean write, long pid, MemorySegment local, long localOffset, long remoteAddress, long length) {
        if (closed) {
            throw new IllegalStateException("copier closed");
        }
        if (!local.isNative()) {
            throw new IllegalArgumentException("cross-memory attach needs a native segment: " + local);
        }
        Objects.checkFromIndexSize(localOffset, length, local.byteSize());
        if (!local.scope().isAlive()) {
            throw new IllegalStateException("the local segment's arena is closed");
        }
        long base = local.address() + localOffset;
        long done = 0;
        while (done < length) {
            long rest = length - done;
            localIov.set(JAVA_LONG, IOV_BASE, base + done);
            localIov.set(JAVA_LONG, IOV_LEN, rest);
            remoteIov.set(JAVA_LONG, IOV_BASE, remoteAddress + done);
            remoteIov.set(JAVA_LONG, IOV_LEN, rest);
            long n = call(write, rest <= CRITICAL_MAX_BYTES, (int) pid);
            if (n < 0) {
                return Downcalls.errno(callState);
            }
            if (n == 0) {           // no progress and no errno: treat as an unmapped remote page
                return Errno.EFAULT;
            }
            done += n;
        }
        return 0;
    }

    /**
     * Adds a range to the next vectored call: {@code length} bytes of {@code local} at
     * {@code localOffset} and as many at {@code remoteAddress} in the other process.
     *
     * @param local         native, alive, owned by the caller, who keeps it alive until the
     *                      queued call returned
     * @param localOffset   offset into {@code local}
     * @param remoteAddress the address in the other process
     * @param length        bytes, at least 1
     * @throws IllegalStateException     if {@link #MAX_IOV} ranges are queued already, if
     *                                   {@code local}'s arena is closed, or this copier is
     * @throws IndexOutOfBoundsException if the range exceeds {@code local}
     * @throws IllegalArgumentException  if {@code local} is not native or {@code length < 1}
     */
    public void queue(MemorySegment local, long localOffset, long remoteAddress, long length) {
        if (closed) {
            throw new IllegalStateException("copier closed");
        }
        if (queued == MAX_IOV) {
            throw new IllegalStateException(MAX_IOV + " ranges queued already");
        }
        if (!local.isNative() || length < 1) {
            throw new IllegalArgumentException("cross-memory attach needs a native segment and at least one byte: "
                    + local + ", " + length + " bytes");
        }
        Objects.checkFromIndexSize(localOffset, length, local.byteSize());
        if (!local.scope().isAlive()) {
            throw new IllegalStateException("the local segment's arena is closed");
        }
        if (localIovs == null) {
            localIovs = arena.allocate(IOVEC, MAX_IOV);
            remoteIovs = arena.allocate(IOVEC, MAX_IOV);
        }
        long at = queued * IOVEC.byteSize();
        localIovs.set(JAVA_LONG, at + IOV_BASE, local.address() + localOffset);
        localIovs.set(JAVA_LONG, at + IOV_LEN, length);
        remoteIovs.set(JAVA_LONG, at + IOV_BASE, remoteAddress);
        remoteIovs.set(JAVA_LONG, at + IOV_LEN, length);
        queued++;
        queuedBytes += length;
    }

    /** How many ranges are queued. */
    public int queued() {
        return queued;
    }

    /**
     * Copies every queued range from process {@code pid} into local memory, in one
     * {@code process_vm_readv}, and empties the queue.
     *
     * @param pid the other process
     * @return the bytes moved: all queued bytes on success; fewer when the kernel stopped early (it
     *         stops at the first remote page it cannot reach, and moves whole iovec entries before
     *         it): the ranges before that count moved, the others did not or only in part;
     *         {@code -errno} when the call failed (nothing is known to have moved)
     * @throws IllegalStateException if this copier is closed
     */
    public long readQueued(long pid) {
        return copyQueued(false, pid);
    }

    /**
     * Copies every queued range from local memory to process {@code pid}, in one
     * {@code process_vm_writev}, and empties the queue. Result as {@link #readQueued}.
     *
     * @param pid the other process
     * @return the bytes moved, or {@code -errno}
     * @throws IllegalStateException if this copier is closed
     */
    public long writeQueued(long pid) {
        return copyQueued(true, pid);
    }

    private long copyQueued(boolean write, long pid) {
        if (closed) {
            throw new IllegalStateException("copier closed");
        }
        int count = queued;
        long bytes = queuedBytes;
        queued = 0;
        queuedBytes = 0;
        if (count == 0) {
            return 0;
        }
        long n;
        try {
            MethodHandle h = write ? (bytes <= CRITICAL_MAX_BYTES ? Handles.WRITEV_CRITICAL : Handles.WRITEV)
                    : (bytes <= CRITICAL_MAX_BYTES ? Handles.READV_CRITICAL : Handles.READV);
            n = (long) h.invokeExact(callState, (int) pid, localIovs, (long) count, remoteIovs, (long) count, 0L);
        } catch (Throwable t) {     // invokeExact of a bound downcall throws nothing checked
            throw new IllegalStateException("process_vm_" + (write ? "writev" : "readv") + " call failed: " + t, t);
        }
        return n >= 0 ? n : -Downcalls.errno(callState);
    }

    /** Forgets the queued ranges without copying them. */
    public void clearQueue() {
        queued = 0;
        queuedBytes = 0;
    }

    private long call(boolean write, boolean critical, int pid) {
        try {
            MethodHandle h = write ? (critical ? Handles.WRITEV_CRITICAL : Handles.WRITEV)
                    : (critical ? Handles.READV_CRITICAL : Handles.READV);
            return (long) h.invokeExact(callState, pid, localIov, 1L, remoteIov, 1L, 0L);
        } catch (Throwable t) {     // invokeExact of a bound downcall throws nothing checked
            throw new IllegalStateException("process_vm_" + (write ? "writev" : "readv") + " call failed: " + t, t);
        }
    }

    /**
     * Whether the process behind {@code pidfd} ({@link Libc#pidfdOpen}) has exited:
     * {@code poll} with a zero timeout, which reports such a descriptor readable once the process
     * is gone. Allocates nothing.
     *
     * @param pidfd an open process descriptor
     * @return true when the process has exited, or when {@code poll} fails (the caller then treats
     *         the process as gone, which is safe)
     * @throws IllegalStateException if this copier is closed
     */
    public boolean hasExited(int pidfd) {
        if (closed) {
            throw new IllegalStateException("copier closed");
        }
        pollFd.set(JAVA_INT, 0, pidfd);
        pollFd.set(JAVA_SHORT, 4, POLLIN);
        for (int attempt = 0; ; attempt++) {
            pollFd.set(JAVA_SHORT, 6, (short) 0);
            int n;
            try {
                n = (int) Handles.POLL.invokeExact(callState, pollFd, 1L, 0);
            } catch (Throwable t) {
                throw new IllegalStateException("poll call failed: " + t, t);
            }
            if (n >= 0) {
                return n != 0;
            }
            // a signal (a profiler's, the JVM's own) can end even a zero-timeout poll with EINTR: that
            // says nothing about the process, so ask again (a few times: then something is wrong)
            if (Downcalls.errno(callState) != Errno.EINTR || attempt == POLL_ATTEMPTS) {
                return true;
            }
        }
    }

    private static final int POLL_ATTEMPTS = 100;
    private static final short POLLIN = 1;

    /** Frees the iovecs. Idempotent; must not race with an op on another thread. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }

    /** The four handles: read and write, each ordinary and critical; bound on first use. */
    private static final class Handles {
        private static final FunctionDescriptor DESCRIPTOR = FunctionDescriptor.of(JAVA_LONG,
                JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG);
        static final MethodHandle READV = Downcalls.libc("process_vm_readv", DESCRIPTOR,
                Downcalls.CAPTURE_ERRNO);
        static final MethodHandle WRITEV = Downcalls.libc("process_vm_writev", DESCRIPTOR,
                Downcalls.CAPTURE_ERRNO);
        static final MethodHandle READV_CRITICAL = Downcalls.libc("process_vm_readv", DESCRIPTOR,
                Downcalls.CAPTURE_ERRNO, Linker.Option.critical(false));
        /** {@code int poll(struct pollfd *fds, nfds_t nfds, int timeout)}, never blocking here (timeout 0). */
        static final MethodHandle POLL = Downcalls.libc("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT),
                Downcalls.CAPTURE_ERRNO, Linker.Option.critical(false));
        static final MethodHandle WRITEV_CRITICAL = Downcalls.libc("process_vm_writev", DESCRIPTOR,
                Downcalls.CAPTURE_ERRNO, Linker.Option.critical(false));
    }
}
