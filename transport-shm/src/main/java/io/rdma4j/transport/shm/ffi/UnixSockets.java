package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.unix.Downcalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * {@code AF_UNIX} sockets that carry descriptors ({@code SCM_RIGHTS}) and tell who is at the other
 * end ({@code SO_PEERCRED}): how the same-host transport hands a memory file to a holder that
 * showed the key, instead of letting anyone find it under {@code /proc/<pid>/fd}. Bound calls,
 * from the Linux man pages {@code socket(2)}, {@code unix(7)}, {@code cmsg(3)}, {@code socket(7)}:
 * <pre>
 *   int socket(int domain, int type, int protocol);
 *   int socketpair(int domain, int type, int protocol, int sv[2]);
 *   int bind(int fd, const struct sockaddr *addr, socklen_t len);
 *   int listen(int fd, int backlog);
 *   int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
 *   int connect(int fd, const struct sockaddr *addr, socklen_t len);
 *   int getsockopt(int fd, int level, int name, void *value, socklen_t *len);
 *   int setsockopt(int fd, int level, int name, const void *value, socklen_t len);
 *   ssize_t sendmsg(int fd, const struct msghdr *msg, int flags);
 *   ssize_t recvmsg(int fd, struct msghdr *msg, int flags);
 *   int shutdown(int fd, int how);
 * </pre>
 * Layouts (LP64 Linux: x86-64 and aarch64 alike):
 * <pre>
 *   struct sockaddr_un { sa_family_t sun_family; char sun_path[108]; }   // abstract: sun_path[0] = 0
 *   struct msghdr { void *msg_name; socklen_t msg_namelen; (4 pad) struct iovec *msg_iov;
 *                   size_t msg_iovlen; void *msg_control; size_t msg_controllen; int msg_flags; }  // 56 bytes
 *   struct cmsghdr { size_t cmsg_len; int cmsg_level; int cmsg_type; unsigned char data[]; }       // 16 + data
 *   struct ucred { pid_t pid; uid_t uid; gid_t gid; }
 *   struct timeval { long tv_sec; long tv_usec; }
 * </pre>
 * {@code CMSG_LEN(n) = 16 + n}, {@code CMSG_SPACE(n) = 16 + n} rounded up to 8.
 *
 * <p>Every socket is created close-on-exec. Descriptors are plain {@code int}s owned by the
 * caller, who closes them with {@link Libc#close(int)} exactly once. Failures are
 * {@link IOException}s naming the call and the {@code errno} text. Thread-safe (no state).
 */
@SuppressWarnings("restricted")     // this package is where the restricted FFM calls are meant to live
public final class UnixSockets {

    static final int AF_UNIX = 1;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_SEQPACKET = 5;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int SOL_SOCKET = 1;
    static final int SCM_RIGHTS = 1;
    static final int SO_PEERCRED = 17;
    static final int SO_RCVTIMEO = 20;
    static final int SO_SNDTIMEO = 21;
    static final int MSG_PEEK = 2;
    static final int MSG_DONTWAIT = 0x40;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int MSG_CMSG_CLOEXEC = 0x40000000;
    static final int SHUT_RDWR = 2;

    private static final long SOCKADDR_UN = 110;
    private static final long MAX_NAME = 107;          // sun_path minus the leading NUL of an abstract name
    private static final long MSGHDR = 56;
    private static final long CMSGHDR = 16;
    /** Most descriptors one message carries here. */
    public static final int MAX_FDS = 4;

    private UnixSockets() {
    }

    /**
     * Who is at the other end of a connected socket, as the kernel recorded it when the
     * connection was made ({@code SO_PEERCRED}).
     *
     * @param pid the peer's process id, in this process's pid namespace (0 if it has none here)
     * @param uid the peer's effective user id
     * @param gid the peer's effective group id
     */
    public record Credentials(long pid, int uid, int gid) {
    }

    /**
     * One message received.
     *
     * @param bytes the message's bytes (at most the size asked for)
     * @param fds   the descriptors it carried, now this process's (close-on-exec), owned by the
     *              caller; empty when none
     */
    public record Message(byte[] bytes, int[] fds) {
        /** Closes every descriptor of the message; for a caller that wants none of them. */
        public void closeFds() {
            for (int fd : fds) {
                Libc.close(fd);
            }
        }
    }

    /**
     * A listening {@code SOCK_SEQPACKET} socket bound to an abstract name (no file: the name lives
     * in this network namespace and vanishes with the socket).
     *
     * @param name    the abstract name, without the leading NUL; at most 107 bytes of UTF-8
     * @param backlog connections the kernel queues before {@link #accept} takes them
     * @return the listening descriptor
     * @throws IOException if the name is taken ({@code EADDRINUSE}) or a call fails
     */
    public static int listen(String name, int backlog) throws IOException {
        int fd = socket(SOCK_SEQPACKET);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment address = abstractAddress(arena, name);
            check(state, (int) H.BIND.invokeExact(state, fd, address, (int) address.byteSize()), "bind(@" + name + ")");
            check(state, (int) H.LISTEN.invokeExact(state, fd, backlog), "listen(@" + name + ")");
            return fd;
        } catch (IOException | RuntimeException e) {
            Libc.close(fd);
            throw e;
        } catch (Throwable t) {
            Libc.close(fd);
            throw bindingFailed(t);
        }
    }

    /**
     * Waits for the next connection to a {@link #listen}ing socket.
     *
     * @param listening the listening descriptor
     * @return the connected descriptor (close-on-exec), owned by the caller
     * @throws IOException if the call fails, e.g. {@code EINVAL} once the socket was
     *                     {@link #shutdown}: the way to wake a thread blocked here
     */
    public static int accept(int listening) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            while (true) {
                int fd = (int) H.ACCEPT4.invokeExact(state, listening, MemorySegment.NULL, MemorySegment.NULL, SOCK_CLOEXEC);
                if (fd >= 0) {
                    return fd;
                }
                int errno = Downcalls.errno(state);
                if (errno != Errno.EINTR) {
                    throw new IOException("accept4 failed: " + Errno.describe(errno));
                }
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /**
     * Connects a new {@code SOCK_SEQPACKET} socket to the abstract name {@code name}, waiting at
     * most {@code timeoutNanos} (a full backlog), which also bounds each later send and receive
     * on it ({@code SO_SNDTIMEO}, {@code SO_RCVTIMEO}).
     *
     * @return the connected descriptor, owned by the caller
     * @throws SocketTimeoutException if the wait ran out
     * @throws IOException            if nobody listens there ({@code ECONNREFUSED}) or a call fails
     */
    public static int connect(String name, long timeoutNanos) throws IOException {
        int fd = socket(SOCK_SEQPACKET);
        try (Arena arena = Arena.ofConfined()) {
            setTimeouts(fd, timeoutNanos);
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment address = abstractAddress(arena, name);
            if ((int) H.CONNECT.invokeExact(state, fd, address, (int) address.byteSize()) != 0) {
                int errno = Downcalls.errno(state);
                throw errno == Errno.EAGAIN ? new SocketTimeoutException("connect(@" + name + ") timed out")
                        : new IOException("connect(@" + name + ") failed: " + Errno.describe(errno));
            }
            return fd;
        } catch (IOException | RuntimeException e) {
            Libc.close(fd);
            throw e;
        } catch (Throwable t) {
            Libc.close(fd);
            throw bindingFailed(t);
        }
    }

    /**
     * Bounds every later blocking send and receive on {@code fd} ({@code SO_SNDTIMEO},
     * {@code SO_RCVTIMEO}) to {@code timeoutNanos}, at least 1 ms (0 would mean "forever").
     *
     * @throws IOException if {@code setsockopt} fails
     */
    public static void setTimeouts(int fd, long timeoutNanos) throws IOException {
        long micros = Math.max(1000, timeoutNanos / 1000);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment tv = arena.allocate(16, 8);
            tv.set(JAVA_LONG, 0, micros / 1_000_000);
            tv.set(JAVA_LONG, 8, micros % 1_000_000);
            check(state, (int) H.SETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_RCVTIMEO, tv, 16), "setsockopt(SO_RCVTIMEO)");
            check(state, (int) H.SETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_SNDTIMEO, tv, 16), "setsockopt(SO_SNDTIMEO)");
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /**
     * The credentials of the process at the other end of a connected socket
     * ({@code getsockopt(SO_PEERCRED)}).
     *
     * @throws IOException if the call fails (not a connected {@code AF_UNIX} socket)
     */
    public static Credentials peer(int fd) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment ucred = arena.allocate(12, 4);
            MemorySegment length = arena.allocate(JAVA_INT);
            length.set(JAVA_INT, 0, 12);
            check(state, (int) H.GETSOCKOPT.invokeExact(state, fd, SOL_SOCKET, SO_PEERCRED, ucred, length),
                    "getsockopt(SO_PEERCRED)");
            return new Credentials(ucred.get(JAVA_INT, 0), ucred.get(JAVA_INT, 4), ucred.get(JAVA_INT, 8));
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /**
     * Sends one message, with {@code fds} attached ({@code SCM_RIGHTS}) when there are any. The
     * receiver gets its own descriptors for the same open files; the caller's stay open.
     * Never raises {@code SIGPIPE} ({@code MSG_NOSIGNAL}).
     *
     * @param bytes at least one byte
     * @param fds   at most {@link #MAX_FDS} descriptors of this process
     * @throws SocketTimeoutException when the socket's send timeout ran out
     * @throws IOException            if the call fails or sent fewer bytes
     */
    public static void send(int fd, byte[] bytes, int... fds) throws IOException {
        if (bytes.length == 0 || fds.length > MAX_FDS) {
            throw new IllegalArgumentException(bytes.length + " bytes, " + fds.length + " descriptors");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment data = arena.allocateFrom(JAVA_BYTE, bytes);
            MemorySegment msg = message(arena, data, fds.length);
            if (fds.length > 0) {
                MemorySegment control = msg.get(ADDRESS, 32).reinterpret(cmsgSpace(fds.length));
                control.set(JAVA_LONG, 0, CMSGHDR + 4L * fds.length);        // CMSG_LEN
                control.set(JAVA_INT, 8, SOL_SOCKET);
                control.set(JAVA_INT, 12, SCM_RIGHTS);
                for (int i = 0; i < fds.length; i++) {
                    control.set(JAVA_INT, CMSGHDR + 4L * i, fds[i]);
                }
            }
            long n = (long) H.SENDMSG.invokeExact(state, fd, msg, MSG_NOSIGNAL);
            if (n < 0) {
                int errno = Downcalls.errno(state);
                throw errno == Errno.EAGAIN ? new SocketTimeoutException("sendmsg timed out")
                        : new IOException("sendmsg failed: " + Errno.describe(errno));
            }
            if (n != bytes.length) {
                throw new IOException("sendmsg sent " + n + " of " + bytes.length + " bytes");
            }
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /**
     * Receives one message of at most {@code maxBytes} (a longer one is cut) with at most
     * {@code maxFds} descriptors. With {@code maxFds} 0 no descriptor is ever installed in this
     * process: any the sender attached are dropped by the kernel. Descriptors beyond
     * {@code maxFds} are dropped too.
     *
     * @param peek leave the message queued ({@code MSG_PEEK}): its descriptors are then duplicated
     *             into this process, and stay queued for the next receive; a peek never waits
     *             ({@code MSG_DONTWAIT}: an empty queue is a {@link SocketTimeoutException})
     * @return the message; {@code bytes} is empty at end of stream (the peer closed)
     * @throws SocketTimeoutException when the socket's receive timeout ran out
     * @throws IOException            if the call fails
     */
    public static Message receive(int fd, int maxBytes, int maxFds, boolean peek) throws IOException {
        if (maxBytes <= 0 || maxFds < 0 || maxFds > MAX_FDS) {
            throw new IllegalArgumentException(maxBytes + " bytes, " + maxFds + " descriptors");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment data = arena.allocate(maxBytes);
            MemorySegment msg = message(arena, data, maxFds);
            int flags = MSG_CMSG_CLOEXEC | (peek ? MSG_PEEK | MSG_DONTWAIT : 0);
            long n;
            while (true) {
                n = (long) H.RECVMSG.invokeExact(state, fd, msg, flags);
                if (n >= 0) {
                    break;
                }
                int errno = Downcalls.errno(state);
                if (errno == Errno.EAGAIN) {
                    throw new SocketTimeoutException("recvmsg timed out");
                }
                if (errno != Errno.EINTR) {
                    throw new IOException("recvmsg failed: " + Errno.describe(errno));
                }
            }
            int[] fds = receivedFds(msg, maxFds);
            return new Message(data.asSlice(0, n).toArray(JAVA_BYTE), fds);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /** The descriptors of the SCM_RIGHTS messages in a received {@code msghdr}'s control data. */
    private static int[] receivedFds(MemorySegment msg, int maxFds) {
        long controlLength = msg.get(JAVA_LONG, 40);
        if (maxFds == 0 || controlLength < CMSGHDR) {
            return new int[0];
        }
        MemorySegment control = msg.get(ADDRESS, 32).reinterpret(cmsgSpace(maxFds));
        int[] fds = new int[MAX_FDS];
        int count = 0;
        for (long at = 0; at + CMSGHDR <= controlLength; ) {
            long length = control.get(JAVA_LONG, at);
            if (length < CMSGHDR || at + length > controlLength) {
                break;
            }
            if (control.get(JAVA_INT, at + 8) == SOL_SOCKET && control.get(JAVA_INT, at + 12) == SCM_RIGHTS) {
                for (long i = CMSGHDR; i + 4 <= length && count < MAX_FDS; i += 4) {
                    fds[count++] = control.get(JAVA_INT, at + i);
                }
            }
            at += (length + 7) & ~7L;
        }
        return Arrays.copyOf(fds, count);
    }

    /** A {@code msghdr} with one iovec over {@code data} and room for {@code fds} descriptors. */
    private static MemorySegment message(Arena arena, MemorySegment data, int fds) {
        MemorySegment iov = arena.allocate(16, 8);
        iov.set(ADDRESS, 0, data);
        iov.set(JAVA_LONG, 8, data.byteSize());
        MemorySegment msg = arena.allocate(MSGHDR, 8);       // zeroed: no name, flags 0
        msg.set(ADDRESS, 16, iov);
        msg.set(JAVA_LONG, 24, 1L);
        if (fds > 0) {
            MemorySegment control = arena.allocate(cmsgSpace(fds), 8);
            msg.set(ADDRESS, 32, control);
            msg.set(JAVA_LONG, 40, control.byteSize());
        }
        return msg;
    }

    private static long cmsgSpace(int fds) {
        return CMSGHDR + ((4L * fds + 7) & ~7L);
    }

    /**
     * A connected pair of {@code SOCK_DGRAM} sockets ({@code socketpair}): what
     * {@link ParkedFd} keeps a descriptor in.
     *
     * @return the two descriptors, owned by the caller
     * @throws IOException if the call fails (e.g. too many open files)
     */
    static int[] datagramPair() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment sv = arena.allocate(JAVA_INT, 2);
            check(state, (int) H.SOCKETPAIR.invokeExact(state, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv), "socketpair");
            return new int[] {sv.get(JAVA_INT, 0), sv.get(JAVA_INT, 4)};
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    /**
     * {@code shutdown(fd, SHUT_RDWR)}: wakes a thread blocked in {@link #accept} on it (which then
     * fails) without closing the descriptor, whose number a close would let another thread reuse.
     *
     * @return 0, or the {@code errno}
     */
    public static int shutdown(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            return (int) H.SHUTDOWN.invokeExact(state, fd, SHUT_RDWR) == 0 ? 0 : Downcalls.errno(state);
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    private static int socket(int type) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            int fd = (int) H.SOCKET.invokeExact(state, AF_UNIX, type | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                throw new IOException("socket(AF_UNIX) failed: " + Errno.describe(Downcalls.errno(state)));
            }
            return fd;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw bindingFailed(t);
        }
    }

    private static MemorySegment abstractAddress(Arena arena, String name) {
        byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        if (bytes.length == 0 || bytes.length > MAX_NAME) {
            throw new IllegalArgumentException("abstract socket name of " + bytes.length + " bytes");
        }
        MemorySegment address = arena.allocate(2 + 1 + bytes.length, 2);     // family, NUL, name: no trailing NUL
        address.set(JAVA_SHORT, 0, (short) AF_UNIX);
        MemorySegment.copy(bytes, 0, address, JAVA_BYTE, 3, bytes.length);
        assert address.byteSize() <= SOCKADDR_UN;
        return address;
    }

    private static void check(MemorySegment state, int rc, String call) throws IOException {
        if (rc != 0) {
            throw new IOException(call + " failed: " + Errno.describe(Downcalls.errno(state)));
        }
    }

    private static IllegalStateException bindingFailed(Throwable t) {
        return new IllegalStateException("an AF_UNIX socket call could not be made: " + t, t);
    }

    private static final class H {
        static final MethodHandle SOCKET = Downcalls.libc("socket",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle SOCKETPAIR = Downcalls.libc("socketpair",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle BIND = Downcalls.libc("bind",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle LISTEN = Downcalls.libc("listen",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle ACCEPT4 = Downcalls.libc("accept4",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle CONNECT = Downcalls.libc("connect",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle GETSOCKOPT = Downcalls.libc("getsockopt",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle SETSOCKOPT = Downcalls.libc("setsockopt",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle SENDMSG = Downcalls.libc("sendmsg",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle RECVMSG = Downcalls.libc("recvmsg",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle SHUTDOWN = Downcalls.libc("shutdown",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT), Downcalls.CAPTURE_ERRNO);
    }
}
