package io.rdma4j.transport.shm.ffi;

import java.io.IOException;

/**
 * A descriptor kept where {@code /proc/<pid>/fd} cannot reach it: in the receive queue of a
 * datagram socket of this process. The kernel lets any process of the same user open a regular
 * file (a memory file too) through {@code /proc/<pid>/fd/<n>}, but not a socket ({@code ENXIO}),
 * and a descriptor in flight in a socket's queue has no number in any table.
 *
 * <p>Parking: {@code socketpair(AF_UNIX, SOCK_DGRAM)}, the descriptor sent from one end to the
 * other ({@code SCM_RIGHTS}), then the sending end and the descriptor itself closed: what stays is
 * one socket descriptor, the receiving end, whose queue holds the file. {@link #take()} peeks the
 * message ({@code MSG_PEEK}), which installs a fresh duplicate and leaves the file queued for the
 * next take: the duplicate is reachable through {@code /proc/<pid>/fd} until the caller closes it,
 * which it should do within the same few system calls (e.g. right after passing it on).
 *
 * <p>In-flight descriptors count against the sending user's {@code RLIMIT_NOFILE} (Linux's
 * {@code too_many_unix_fds}): one per parked file, as one descriptor did before.
 *
 * <p>Thread-safe: {@link #take()} and {@link #close()} exclude each other, so a take never reads a
 * socket number that a close has given back (and another thread may have reused).
 */
public final class ParkedFd implements AutoCloseable {

    private final int socket;
    private boolean closed;     // guarded by this

    private ParkedFd(int socket) {
        this.socket = socket;
    }

    /**
     * Parks {@code fd}: on success and on failure alike, {@code fd} itself is closed when this returns.
     *
     * @param fd a descriptor of this process, given up by the caller
     * @return the parked descriptor; the caller closes it
     * @throws IOException if the socket pair cannot be made or the send fails (e.g. too many open
     *                     files, or the user's in-flight limit)
     */
    public static ParkedFd park(int fd) throws IOException {
        try {
            int[] pair = UnixSockets.datagramPair();
            try {
                UnixSockets.send(pair[0], new byte[] {'P'}, fd);
            } catch (IOException | RuntimeException e) {
                Libc.close(pair[1]);
                throw e;
            } finally {
                Libc.close(pair[0]);
            }
            return new ParkedFd(pair[1]);
        } finally {
            Libc.close(fd);
        }
    }

    /**
     * A new descriptor for the parked file, close-on-exec; the caller closes it, soon.
     *
     * @throws IOException if this was closed, or the peek fails or finds no descriptor
     */
    public synchronized int take() throws IOException {
        if (closed) {
            throw new IOException("parked descriptor closed");
        }
        UnixSockets.Message m = UnixSockets.receive(socket, 1, 1, true);
        if (m.fds().length != 1) {
            m.closeFds();
            throw new IOException("parked descriptor missing (" + m.fds().length + " in the queue's head)");
        }
        return m.fds()[0];
    }

    /** Closes the socket, and with it the parked file's last reference here. Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            Libc.close(socket);
        }
    }
}
