package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.UnixSockets;

import java.io.IOException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * How an owner hands its memory to a holder that showed the key: an {@code AF_UNIX}
 * {@code SOCK_SEQPACKET} socket under an abstract name derived from the owner's incarnation
 * ({@link #name}), one connection per request.
 *
 * <p>Both ends check who is at the other one with {@code SO_PEERCRED}, which the kernel fills in
 * at connect time and nobody can forge: the owner serves only processes of its own effective
 * user (another user's connection is closed unanswered); the holder talks only to the process
 * its token names (a same-user process that bound the name first, knowing the incarnation, is
 * refused before anything is sent or received). A request is the {@link ShmProtocol} ATTACH; the
 * owner answers after checking its key, with the access table's files (slots, and this holder's
 * rows) and the buffer's memory file attached ({@code SCM_RIGHTS}) to a grant, and with nothing attached to a refusal. Requests never
 * carry descriptors into the owner: it receives with no room for any, so the kernel drops them.
 *
 * <p>The owner serves connections one after another on one platform thread, each bounded by
 * {@link #SERVE_TIMEOUT}: a same-user process can delay hand-overs by holding connections open,
 * as it could stop the owner outright with a signal; it gets nothing by it.
 */
final class Handover {

    private static final System.Logger LOG = System.getLogger(Handover.class.getName());

    /** How long the owner waits for one connection's request, and for its answer to be taken. */
    static final Duration SERVE_TIMEOUT = Duration.ofSeconds(1);

    private Handover() {
    }

    /** The abstract socket name of the owner of incarnation {@code incarnationHex}. */
    static String name(String incarnationHex) {
        return "rdma4j-shm-" + incarnationHex.toLowerCase(Locale.ROOT);
    }

    /**
     * The owner's answer to one request: its bytes, the descriptors to attach (closed by the server
     * once sent), and, for a request that opens a lasting channel, who takes the connection over.
     *
     * @param then null: the server closes the connection after the answer; otherwise it hands the
     *             connection over once the answer was sent, or tells it that it could not be
     */
    record Answer(byte[] reply, int[] fds, Continuation then) {
        Answer(byte[] reply, int... fds) {
            this(reply, fds, null);
        }
    }

    /** Who takes a connection over after a request that opens a lasting channel. */
    interface Continuation {
        /** The answer went out; the connection (still with the server's timeouts) is now the callee's to close. */
        void take(int connection);

        /** The answer could not be sent; the server closes the connection. Must not throw. */
        void abandon();
    }

    /** The owner's decision on one request, from the peer's kernel-given credentials and its request's bytes. */
    @FunctionalInterface
    interface Service {
        Answer serve(UnixSockets.Credentials peer, byte[] request);
    }

    /** The owner's end: a listening socket and the thread that serves it. */
    static final class Server implements AutoCloseable {
        private final String name;
        private final int listening;
        private final Service service;
        private final int uid = Libc.geteuid();
        private final Thread thread;
        private volatile boolean closed;

        /**
         * Binds {@code name} and starts serving.
         *
         * @throws IOException if the name is taken or the socket cannot be made
         */
        Server(String name, Service service) throws IOException {
            this.name = name;
            this.service = service;
            this.listening = UnixSockets.listen(name, 128);
            this.thread = Thread.ofPlatform().daemon().name("rdma-shm-handover").start(this::run);
        }

        private void run() {
            while (!closed) {
                int connection;
                try {
                    connection = UnixSockets.accept(listening);
                } catch (IOException | RuntimeException e) {
                    if (!closed) {
                        LOG.log(System.Logger.Level.WARNING, "shm: accepting on @" + name + " failed; trying again", e);
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));       // e.g. out of descriptors
                    }
                    continue;
                }
                boolean kept = false;
                try {
                    kept = serve(connection);
                } catch (IOException | RuntimeException e) {
                    LOG.log(System.Logger.Level.DEBUG, "shm: a hand-over request on @" + name + " failed", e);
                } finally {
                    if (!kept) {
                        Libc.close(connection);
                    }
                }
            }
        }

        /** Serves one connection; true when an answer's continuation took it over (then it is not closed here). */
        private boolean serve(int connection) throws IOException {
            UnixSockets.Credentials peer = UnixSockets.peer(connection);
            if (peer.uid() != uid) {
                LOG.log(System.Logger.Level.DEBUG, "shm: refused a hand-over connection from pid {0} of uid {1} "
                        + "(this process runs as uid {2})", peer.pid(), peer.uid(), uid);
                return false;
            }
            UnixSockets.setTimeouts(connection, SERVE_TIMEOUT.toNanos());
            UnixSockets.Message request = UnixSockets.receive(connection, ShmProtocol.REQUEST_BYTES + 1, 0, false);
            if (request.bytes().length == 0) {
                return false;       // a holder checking who listens here
            }
            Answer answer = service.serve(peer, request.bytes());
            boolean sent = false;
            try {
                UnixSockets.send(connection, answer.reply(), answer.fds());
                sent = true;
            } finally {
                for (int fd : answer.fds()) {
                    Libc.close(fd);
                }
                if (!sent && answer.then() != null) {
                    answer.then().abandon();
                }
            }
            if (answer.then() != null) {
                answer.then().take(connection);
                return true;
            }
            return false;
        }

        /** Stops serving and closes the socket; returns once the serving thread ended. Idempotent. */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            closed = true;
            UnixSockets.shutdown(listening);        // wakes accept; the number stays ours until the thread ended
            boolean interrupted = false;
            while (true) {
                try {
                    thread.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            Libc.close(listening);
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The holder's end: connects to the owner's socket and checks that the owner, process
     * {@code ownerPid} of this effective user, is at the other end.
     *
     * @return the connected descriptor; the caller closes it
     * @throws IOException if nobody listens there, or someone else does (the message says who)
     */
    static int connect(String name, long ownerPid, long timeoutNanos) throws IOException {
        int fd = UnixSockets.connect(name, timeoutNanos);
        try {
            UnixSockets.Credentials peer = UnixSockets.peer(fd);
            int uid = Libc.geteuid();
            if (peer.pid() != ownerPid || peer.uid() != uid) {
                throw new IOException("@" + name + " is held by pid " + peer.pid() + " of uid " + peer.uid()
                        + ", not by the owner (pid " + ownerPid + " of uid " + uid + ")");
            }
            return fd;
        } catch (IOException | RuntimeException e) {
            Libc.close(fd);
            throw e;
        }
    }

    /**
     * Sends {@code request} to the owner and returns its answer, with the descriptors it attached
     * (the caller's to close).
     *
     * @throws IOException if the owner cannot be reached, is not who answers, or does not answer in time
     */
    static UnixSockets.Message ask(String name, long ownerPid, byte[] request, long timeoutNanos) throws IOException {
        int fd = connect(name, ownerPid, timeoutNanos);
        try {
            UnixSockets.send(fd, request);
            UnixSockets.Message reply = UnixSockets.receive(fd, ShmProtocol.MAX_REPLY, 3, false);
            if (reply.bytes().length == 0) {
                reply.closeFds();
                throw new IOException("the owner closed the hand-over connection without answering");
            }
            return reply;
        } finally {
            Libc.close(fd);
        }
    }
}
