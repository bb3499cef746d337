package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.unix.Downcalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.net.SocketTimeoutException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One connected {@code AF_UNIX SOCK_SEQPACKET} socket used for many small messages without
 * allocating per message: the staging channel between a holder and an owner. Messages go from and
 * into native scratch the caller allocated once. Bound calls ({@code send(2)}, {@code recv(2)},
 * {@code setsockopt(2)}):
 * <pre>
 *   ssize_t send(int fd, const void *buf, size_t len, int flags);
 *   ssize_t recv(int fd, void *buf, size_t len, int flags);
 *   int setsockopt(int fd, int level, int name, const void *value, socklen_t len);  // SO_RCVTIMEO, struct timeval
 * </pre>
 * Not thread-safe: one thread at a time uses it (the errno scratch and the timeval are shared).
 * Owns its descriptor: {@link #close()} closes it, exactly once.
 */
@SuppressWarnings("restricted")
public final class SeqPacket implements AutoCloseable {

    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
    private final MemorySegment timeval = arena.allocate(16, 8);
    private long timeoutMicros = -1;        // what SO_RCVTIMEO was last set to; -1: unknown
    private boolean closed;

    /**
     * Takes ownership of {@code fd}, a connected {@code SOCK_SEQPACKET} socket.
     *
     * @param fd the connected socket; closed by {@link #close()}
     */
    public SeqPacket(int fd) {
        this.fd = fd;
    }

    /** The descriptor, for {@link UnixSockets#send} of a message with descriptors. */
    public int fd() {
        return fd;
    }

    /**
     * Sends the first {@code length} bytes of {@code from} as one message (never raising
     * {@code SIGPIPE}).
     *
     * @throws SocketTimeoutException when the socket's send timeout ran out
     * @throws IOException            if the peer is gone ({@code EPIPE}, {@code ECONNRESET}) or the call fails
     */
    public void send(MemorySegment from, long length) throws IOException {
        try {
            long n;
            do {
                n = (long) H.SEND.invokeExact(state, fd, from, length, UnixSockets.MSG_NOSIGNAL);
            } while (n < 0 && errno() == Errno.EINTR);
            if (n < 0) {
                int errno = errno();
                throw errno == Errno.EAGAIN ? new SocketTimeoutException("send timed out")
                        : new IOException("send failed: " + Errno.describe(errno));
            }
            if (n != length) {
                throw new IOException("send sent " + n + " of " + length + " bytes");
            }
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("send could not be called: " + t, t);
        }
    }

    /**
     * Receives one message into {@code into} (a longer one is cut), waiting at most
     * {@code timeoutNanos} ({@code 0}: for ever).
     *
     * @return the message's length; 0 at end of stream (the peer closed, or {@link #shutdown()})
     * @throws SocketTimeoutException when the wait ran out
     * @throws IOException            if the call fails (e.g. {@code ECONNRESET})
     */
    public int receive(MemorySegment into, long timeoutNanos) throws IOException {
        receiveTimeout(timeoutNanos);
        try {
            long n;
            do {
                n = (long) H.RECV.invokeExact(state, fd, into, into.byteSize(), 0);
            } while (n < 0 && errno() == Errno.EINTR);
            if (n < 0) {
                int errno = errno();
                throw errno == Errno.EAGAIN ? new SocketTimeoutException("recv timed out")
                        : new IOException("recv failed: " + Errno.describe(errno));
            }
            return (int) n;
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("recv could not be called: " + t, t);
        }
    }

    /** Sets {@code SO_RCVTIMEO} unless it is set to that already; below 1 ms counts as 1 ms, 0 is for ever. */
    private void receiveTimeout(long timeoutNanos) throws IOException {
        long micros = timeoutNanos <= 0 ? 0 : Math.max(1000, timeoutNanos / 1000);
        if (micros == timeoutMicros) {
            return;
        }
        timeval.set(JAVA_LONG, 0, micros / 1_000_000);
        timeval.set(JAVA_LONG, 8, micros % 1_000_000);
        try {
            if ((int) H.SETSOCKOPT.invokeExact(state, fd, UnixSockets.SOL_SOCKET, UnixSockets.SO_RCVTIMEO, timeval, 16) != 0) {
                throw new IOException("setsockopt(SO_RCVTIMEO) failed: " + Errno.describe(errno()));
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("setsockopt could not be called: " + t, t);
        }
        timeoutMicros = micros;
    }

    /** Wakes a thread blocked in {@link #receive} on this socket (it sees end of stream); the descriptor stays open. */
    public synchronized void shutdown() {
        if (!closed) {              // once closed, the number may name another descriptor
            UnixSockets.shutdown(fd);
        }
    }

    /** Closes the descriptor and frees the scratch. Idempotent; no thread may be using it. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Libc.close(fd);
        arena.close();
    }

    private int errno() {
        return Downcalls.errno(state);
    }

    private static final class H {
        static final MethodHandle SEND = Downcalls.libc("send",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle RECV = Downcalls.libc("recv",
                FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), Downcalls.CAPTURE_ERRNO);
        static final MethodHandle SETSOCKOPT = Downcalls.libc("setsockopt",
                FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT),
                Downcalls.CAPTURE_ERRNO);
    }
}
