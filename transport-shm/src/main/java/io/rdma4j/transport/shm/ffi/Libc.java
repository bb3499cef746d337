package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Downcalls;
import io.rdma4j.unix.Errno;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The C library calls of the same-host transport, bound through the FFM API from the JVM's
 * default lookup:
 * <pre>
 *   ssize_t process_vm_readv(pid_t pid, const struct iovec *local_iov, unsigned long liovcnt,
 *                            const struct iovec *remote_iov, unsigned long riovcnt, unsigned long flags);
 *   ssize_t process_vm_writev(... same ...);          // both: -1 and errno on failure
 *   int prctl(int option, ...);                        // variadic; -1 and errno on failure
 *   int memfd_create(const char *name, unsigned int flags);   // fd, or -1 and errno
 *   int ftruncate(int fd, off_t length);               // -1 and errno on failure
 *   int fcntl(int fd, int cmd, ...);                   // F_ADD_SEALS; -1 and errno on failure
 *   int close(int fd);
 *   int pidfd_open(pid_t pid, unsigned int flags);     // fd, or -1 and errno (glibc 2.36+)
 *   int poll(struct pollfd *fds, nfds_t nfds, int timeout);   // via ProcessVmCopier#hasExited
 *   void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset);  // MAP_FAILED: (void *) -1
 *   int munmap(void *addr, size_t length);
 *   off_t lseek(int fd, off_t offset, int whence);
 *   uid_t geteuid(void);
 * </pre>
 * The copies themselves go through {@link ProcessVmCopier}, which owns preallocated
 * {@code iovec}s; this class holds the handles and the process-wide probe.
 *
 * <p>Nothing is bound until first use ({@link #probe()}, {@link #allowAnyPtracer()}, or a copier);
 * a missing symbol then surfaces as the probe's reason, never as an error while the provider is
 * merely instantiated. Thread-safe.
 */
@SuppressWarnings("restricted")     // this package is where the restricted FFM calls are meant to live
public final class Libc {

    /** {@code PR_SET_PTRACER} of {@code <linux/prctl.h>}: 0x59616d61 ("Yama"). */
    static final int PR_SET_PTRACER = 0x59616d61;
    /** {@code PR_SET_PTRACER_ANY}: {@code ((unsigned long)-1)}. */
    static final long PR_SET_PTRACER_ANY = -1L;

    private Libc() {
    }

    /**
     * Whether cross-memory attach works in this process: one {@code process_vm_readv} of 8 bytes
     * of this process's own memory (always allowed by the ptrace rules, so a refusal means a
     * seccomp filter or a kernel without the call). Runs once; later calls return the cached text.
     *
     * @return {@code ""} when the call works; otherwise why not, e.g.
     *         "process_vm_readv is refused in this process: errno 1 (Operation not permitted)
     *         (a seccomp filter or container policy?)"; never throws
     */
    public static String probe() {
        return ProbeHolder.REASON;
    }

    private static final class ProbeHolder {
        static final String REASON = runProbe();
    }

    private static String runProbe() {
        try (Arena arena = Arena.ofConfined(); ProcessVmCopier copier = new ProcessVmCopier()) {
            MemorySegment source = arena.allocate(JAVA_LONG).fill((byte) 0x5a);
            MemorySegment target = arena.allocate(JAVA_LONG);
            int errno = copier.read(ProcessHandle.current().pid(), target, 0, source.address(), source.byteSize());
            if (errno == 0 && target.get(JAVA_LONG, 0) == source.get(JAVA_LONG, 0)) {
                return "";
            }
            if (errno == Errno.ENOSYS) {
                return "process_vm_readv is not implemented by this kernel (CONFIG_CROSS_MEMORY_ATTACH off): "
                        + Errno.describe(errno);
            }
            return "process_vm_readv is refused in this process: " + Errno.describe(errno)
                    + (errno == Errno.EPERM ? " (a seccomp filter or container policy?)" : "");
        } catch (Throwable t) {     // a broken binding must become a reason, never a crash
            return "binding process_vm_readv failed: " + t;
        }
    }

    /**
     * {@code prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0)}: under Yama's
     * {@code ptrace_scope = 1}, lets any process of this user attach to this one (what
     * {@code process_vm_readv} from a same-host peer needs). Without Yama the kernel answers
     * {@link Errno#EINVAL}.
     *
     * @return 0 on success, otherwise the {@code errno}; never throws for a failed call
     * @throws IllegalStateException if {@code prctl} cannot be bound
     */
    public static int allowAnyPtracer() {
        return setPtracer(PR_SET_PTRACER_ANY);
    }

    /**
     * {@code prctl(PR_SET_PTRACER, 0, 0, 0, 0)}: undoes {@link #allowAnyPtracer()}, so that Yama's
     * {@code ptrace_scope = 1} again lets only this process's ancestors attach to it.
     *
     * @return 0 on success, otherwise the {@code errno} ({@link Errno#EINVAL} without Yama); never
     *         throws for a failed call
     * @throws IllegalStateException if {@code prctl} cannot be bound
     */
    public static int clearPtracer() {
        return setPtracer(0L);
    }

    private static int setPtracer(long ptracer) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            int rc = (int) Prctl.HANDLE.invokeExact(state, PR_SET_PTRACER, ptracer, 0L, 0L, 0L);
            return rc == 0 ? 0 : Downcalls.errno(state);
        } catch (Throwable t) {
            throw new IllegalStateException("prctl(PR_SET_PTRACER) could not be called: " + t, t);
        }
    }

    /** {@code int prctl(int option, ...)}: the four trailing {@code unsigned long}s are variadic. */
    private static final class Prctl {
        static final MethodHandle HANDLE = Downcalls.libc("prctl",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG),
                Linker.Option.firstVariadicArg(1), Downcalls.CAPTURE_ERRNO);
    }

    /** {@code MFD_CLOEXEC} of {@code <sys/mman.h>}: the descriptor is not inherited by child processes. */
    static final int MFD_CLOEXEC = 1;
    /** {@code MFD_ALLOW_SEALING}: seals may be added ({@code fcntl(F_ADD_SEALS)}). */
    static final int MFD_ALLOW_SEALING = 2;
    /** {@code F_ADD_SEALS} of {@code <fcntl.h>} ({@code F_LINUX_SPECIFIC_BASE + 9}). */
    static final int F_ADD_SEALS = 1033;
    /** {@code F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW}: the size is fixed for good. */
    static final long SEAL_SIZE = 1 | 2 | 4;
    /** {@code F_SEAL_SHRINK | F_SEAL_GROW}: the size is fixed, more seals may follow. */
    static final long SEAL_SIZE_OPEN = 2 | 4;

    /**
     * Creates an anonymous memory file of {@code size} bytes (zero-filled, pages allocated on
     * first touch) whose size nobody can change afterwards: {@code memfd_create(name, MFD_CLOEXEC
     * | MFD_ALLOW_SEALING)}, {@code ftruncate(fd, size)}, then {@code fcntl(fd, F_ADD_SEALS,
     * F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW)}: a peer that opens the file cannot shrink it
     * under the owner's mapping (whose next touch would then raise SIGBUS).
     * The caller owns the descriptor and must {@link #close(int)} it exactly once; the memory
     * lives until the descriptor and every mapping of it are gone.
     *
     * @param name a name for {@code /proc/<pid>/fd} listings, e.g. "rdma4j-shm"; at most 249 bytes
     * @param size the file's length in bytes
     * @return the new file descriptor
     * @throws IOException naming the call and the errno text when either call fails (the
     *                             descriptor is then already closed)
     */
    public static int memfdCreate(String name, long size) throws IOException {
        return memfdCreate(name, size, SEAL_SIZE);
    }

    /** {@code F_SEAL_FUTURE_WRITE}: no new writable mapping or write of the file, by anyone; mappings made before keep writing. */
    static final long SEAL_FUTURE_WRITE = 0x10;
    /** {@code F_SEAL_SEAL}: no more seals. */
    static final long SEAL_SEAL = 1;

    /**
     * {@code fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL)}: from now on the file can
     * be mapped read-only only (the caller's own writable mapping, made before, stays writable).
     *
     * @throws IOException naming the errno when the call fails
     */
    public static void sealFutureWrites(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            if ((int) MemFd.FCNTL.invokeExact(state, fd, F_ADD_SEALS, SEAL_FUTURE_WRITE | SEAL_SEAL) != 0) {
                throw new IOException("fcntl(F_ADD_SEALS, F_SEAL_FUTURE_WRITE) failed: "
                        + Errno.describe(Downcalls.errno(state)));
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("fcntl could not be called: " + t, t);
        }
    }

    /** {@link #memfdCreate(String, long)} with the given seals ({@code SEAL_SIZE} without {@code F_SEAL_SEAL} leaves room for more). */
    static int memfdCreate(String name, long size, long seals) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            int fd = (int) MemFd.CREATE.invokeExact(state, arena.allocateFrom(name), MFD_CLOEXEC | MFD_ALLOW_SEALING);
            if (fd < 0) {
                throw new IOException("memfd_create(" + name + ") failed: "
                        + Errno.describe(Downcalls.errno(state)));
            }
            if ((int) MemFd.FTRUNCATE.invokeExact(state, fd, size) != 0) {
                int errno = Downcalls.errno(state);
                close(fd);
                throw new IOException("ftruncate(memfd " + name + ", " + size + ") failed: " + Errno.describe(errno));
            }
            if ((int) MemFd.FCNTL.invokeExact(state, fd, F_ADD_SEALS, seals) != 0) {
                int errno = Downcalls.errno(state);
                close(fd);
                throw new IOException("fcntl(memfd " + name + ", F_ADD_SEALS) failed: " + Errno.describe(errno));
            }
            return fd;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("memfd_create could not be called: " + t, t);
        }
    }

    /**
     * {@code close(fd)}.
     *
     * @param fd a descriptor this process owns; closed exactly once by its owner
     * @return 0, or the {@code errno} of a failed close (the descriptor is gone either way on Linux)
     * @throws IllegalStateException if {@code close} cannot be bound
     */
    public static int close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            return (int) MemFd.CLOSE.invokeExact(state, fd) == 0 ? 0 : Downcalls.errno(state);
        } catch (Throwable t) {
            throw new IllegalStateException("close could not be called: " + t, t);
        }
    }

    /**
     * {@code pidfd_open(pid, 0)}: a descriptor that refers to process {@code pid} itself, not to
     * whatever process later reuses the number; it becomes readable when the process exits
     * ({@link ProcessVmCopier#hasExited(int)}).
     *
     * @param pid the process
     * @return the descriptor (close it with {@link #close(int)}), or {@code -errno} on failure
     *         ({@code -ESRCH}: no such process; {@code -ENOSYS}: kernel before 5.3)
     */
    public static int pidfdOpen(long pid) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            int fd = (int) MemFd.PIDFD_OPEN.invokeExact(state, (int) pid, 0);
            return fd >= 0 ? fd : -Downcalls.errno(state);
        } catch (Throwable t) {      // no pidfd_open in this C library
            return -Errno.ENOSYS;
        }
    }

    /** {@code F_GET_SEALS} of {@code <fcntl.h>} ({@code F_LINUX_SPECIFIC_BASE + 10}). */
    static final int F_GET_SEALS = 1034;
    /** {@code F_SEAL_SHRINK}: the file cannot be made shorter. */
    public static final int SEAL_SHRINK = 2;
    private static final int PROT_READ = 1;
    private static final int PROT_READ_WRITE = 1 | 2;
    private static final int MAP_SHARED = 1;
    private static final int SEEK_END = 2;

    /**
     * {@code mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)}.
     *
     * @return the mapping's address; the caller unmaps it with {@link #munmap} exactly once
     * @throws IOException naming the errno when the call fails
     */
    public static long mmapShared(int fd, long size) throws IOException {
        return mmapShared(fd, size, true);
    }

    /**
     * {@code mmap(NULL, size, PROT_READ [| PROT_WRITE], MAP_SHARED, fd, 0)}.
     *
     * @param writable whether to map it writable as well
     * @return the mapping's address; the caller unmaps it with {@link #munmap} exactly once
     * @throws IOException naming the errno when the call fails
     */
    public static long mmapShared(int fd, long size, boolean writable) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment at = (MemorySegment) MemFd.MMAP.invokeExact(state, MemorySegment.NULL, size,
                    writable ? PROT_READ_WRITE : PROT_READ,
                    MAP_SHARED, fd, 0L);
            if (at.address() == -1L) {
                throw new IOException("mmap of " + size + " bytes failed: " + Errno.describe(Downcalls.errno(state)));
            }
            return at.address();
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("mmap could not be called: " + t, t);
        }
    }

    /**
     * {@code munmap(address, size)}.
     *
     * @return 0, or the errno
     */
    public static int munmap(long address, long size) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            return (int) MemFd.MUNMAP.invokeExact(state, MemorySegment.ofAddress(address), size) == 0 ? 0
                    : Downcalls.errno(state);
        } catch (Throwable t) {
            throw new IllegalStateException("munmap could not be called: " + t, t);
        }
    }

    /**
     * The size of the file behind {@code fd} ({@code lseek(fd, 0, SEEK_END)}) and its seals
     * ({@code fcntl(fd, F_GET_SEALS)}).
     *
     * @return {size, seals}
     * @throws IOException if either call fails (e.g. not a memory file: F_GET_SEALS is {@code EINVAL})
     */
    public static long[] sizeAndSeals(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            long size = (long) MemFd.LSEEK.invokeExact(state, fd, 0L, SEEK_END);
            if (size < 0) {
                throw new IOException("lseek failed: " + Errno.describe(Downcalls.errno(state)));
            }
            int seals = (int) MemFd.FCNTL.invokeExact(state, fd, F_GET_SEALS, 0L);
            if (seals < 0) {
                throw new IOException("fcntl(F_GET_SEALS) failed: " + Errno.describe(Downcalls.errno(state)));
            }
            return new long[] {size, seals};
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("lseek/fcntl could not be called: " + t, t);
        }
    }

    /**
     * {@code geteuid()}: the user id the kernel checks this process's accesses with, and the one
     * {@code SO_PEERCRED} reports for it.
     */
    public static int geteuid() {
        try {
            return (int) MemFd.GETEUID.invokeExact();
        } catch (Throwable t) {
            throw new IllegalStateException("geteuid could not be called: " + t, t);
        }
    }

    private static final class MemFd {
        static final MethodHandle MMAP = Downcalls.libc("mmap", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT,
                JAVA_INT, JAVA_INT, JAVA_LONG), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle MUNMAP = Downcalls.libc("munmap", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG),
                Downcalls.CAPTURE_ERRNO);
        static final MethodHandle LSEEK = Downcalls.libc("lseek", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT),
                Downcalls.CAPTURE_ERRNO);
        static final MethodHandle GETEUID = Downcalls.libc("geteuid", FunctionDescriptor.of(JAVA_INT));
        static final MethodHandle PIDFD_OPEN = Downcalls.libc("pidfd_open", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT),
                Downcalls.CAPTURE_ERRNO);
        static final MethodHandle CREATE = Downcalls.libc("memfd_create", FunctionDescriptor.of(JAVA_INT,
                ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle FTRUNCATE = Downcalls.libc("ftruncate", FunctionDescriptor.of(JAVA_INT,
                JAVA_INT, JAVA_LONG), Downcalls.CAPTURE_ERRNO);
        /** {@code int fcntl(int fd, int cmd, ...)}: the third argument is variadic. */
        static final MethodHandle FCNTL = Downcalls.libc("fcntl", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG),
                Linker.Option.firstVariadicArg(2), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle CLOSE = Downcalls.libc("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT),
                Downcalls.CAPTURE_ERRNO);
    }
}
