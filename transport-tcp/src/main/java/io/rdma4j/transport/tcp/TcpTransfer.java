package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One op of a submit: its chunks, shared out among up to {@code rdma.tcp.parallelism} workers,
 * each on its own pooled connection. Every exchange is bracketed by the submit's
 * {@link TcpSubmission}, so that aborting the submit stops it.
 */
final class TcpTransfer {

    private static final System.Logger LOG = System.getLogger(TcpTransfer.class.getName());
    private static final VarHandle NEXT_CHUNK;
    private static final VarHandle FAILURE;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            NEXT_CHUNK = lookup.findVarHandle(TcpTransfer.class, "nextChunk", long.class);
            FAILURE = lookup.findVarHandle(TcpTransfer.class, "failure", TransportException.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final boolean read;
    private final MemorySegment local;
    private final long bufferId;
    private final byte[] accessKey;
    private final byte[] incarnation;
    private final long remoteOffset;
    private final Endpoint peer;
    private final Deadline deadline;
    private final long budgetNanos;
    private final String where;
    private final long total;
    private final long chunks;
    /** The next chunk a worker takes (through NEXT_CHUNK). */
    private long nextChunk;
    /** The first failure of a worker (through FAILURE). */
    private volatile TransportException failure;
    private final TcpSubmission submission;
    private final TcpTransport transport;

    TcpTransfer(TcpTransport transport, TransportOp op, boolean read, TcpTransport.Target target, Deadline deadline,
                long budgetNanos, String where, TcpSubmission submission) {
        this.transport = transport;
        this.submission = submission;
        this.read = read;
        this.local = op.local();
        this.bufferId = target.bufferId();
        this.accessKey = target.accessKey();
        this.incarnation = target.incarnation();
        this.remoteOffset = op.remoteOffset();
        this.peer = target.peer();
        this.deadline = deadline;
        this.budgetNanos = budgetNanos;
        this.where = where;
        this.total = op.length();
        this.chunks = total <= 0 ? 0 : (total - 1) / transport.chunkBytes() + 1;
    }

    String label() {
        return read ? "tcp read of buffer " + bufferId + " from " + peer
                : "tcp write of buffer " + bufferId + " to " + peer;
    }

    void run() throws InterruptedException {
        if (chunks == 0) {
            return;
        }
        checkAccessible();
        int workers = (int) Math.min(transport.parallelism(), chunks);
        if (workers == 1) {
            work(0);
        } else {
            runWorkers(workers);
        }
        TransportException f = failure;
        if (f != null) {
            throw f;
        }
    }

    /** Throws the error for a local segment this thread cannot touch. */
    void checkAccessible() {
        if (!local.isAccessibleBy(Thread.currentThread())) {
            throw new TransportException(Kind.LOCAL_ACCESS, label() + ": the local segment is confined to another "
                    + "thread; transports work on their own threads, so allocate it from a shared or global arena"
                    + where);
        }
    }

    /** The error for local memory that became unusable during the transfer (its arena closed, say). */
    TransportException localMemoryGone(RuntimeException e) {
        return new TransportException(Kind.LOCAL_ACCESS, label() + " failed: the local memory is no longer "
                + "accessible (" + e.getMessage() + ")" + where, e);
    }

    /** Runs worker 0 here and the others on pool threads, and waits for them. */
    private void runWorkers(int workers) throws InterruptedException {
        List<TcpThreads.Task> helpers = new ArrayList<>(workers - 1);
        String name = Thread.currentThread().getName();
        for (int w = 1; w < workers; w++) {
            int worker = w;
            try {
                helpers.add(transport.threads().start(name + "-worker-" + w, () -> work(worker), TcpThreads.IGNORE));
            } catch (RuntimeException | OutOfMemoryError e) {
                // Fewer workers only means less parallelism: the chunks are shared out dynamically.
                LOG.log(Level.WARNING, label() + ": cannot start worker " + w + ", continuing with " + w + ": " + e);
                break;
            }
        }
        work(0);
        for (TcpThreads.Task helper : helpers) {
            helper.join();
        }
    }

    /** Worker {@code worker}: takes chunks until none is left or a worker failed; runs on its own connection. */
    private void work(int worker) {
        TcpConnection connection = null;
        Watchdog.Guard guard = null;
        boolean keep = false;
        try {
            boolean exchanged = false;
            long index;
            while (failure == null && !submission.isAborted() && (index = (long) NEXT_CHUNK.getAndAdd(this, 1L)) < chunks) {
                long offset = index * transport.chunkBytes();
                int length = (int) Math.min(transport.chunkBytes(), total - offset);
                if (deadline.isExpired()) {
                    throw timeout(null);
                }
                if (connection == null) {
                    connection = transport.pool().acquire(peer, deadline, true);
                    guard = arm(connection);
                }
                try {
                    exchange(worker, connection, offset, length);
                } catch (IOException e) {
                    if (exchanged || !connection.isReused() || connection.isExpired() || transport.isClosing() || submission.isAborted()) {
                        throw e;
                    }
                    // A pooled connection may have gone stale while idle (peer restarted, closed
                    // it): retry this chunk once on a new connection. Chunks are idempotent.
                    LOG.log(Level.DEBUG, () -> label() + ": pooled connection failed (" + e + "), reconnecting");
                    guard.close();
                    transport.pool().discard(connection);
                    connection = null;
                    connection = transport.pool().acquire(peer, deadline, false);
                    guard = arm(connection);
                    exchange(worker, connection, offset, length);
                }
                exchanged = true;
            }
            keep = true;
        } catch (TcpRefusedException refused) {
            keep = TcpProtocol.isAccessRefusal(refused.code()); // the connection is still in step
            fail(refusal(refused));
        } catch (IOException e) {
            fail(ioFailure(e, connection));
        } catch (TransportException e) {
            fail(e);
        } catch (IllegalStateException | WrongThreadException e) {
            fail(localMemoryGone(e));
        } catch (RuntimeException | Error e) {
            // Never let a worker die silently: its chunk would be missing from a "successful" transfer.
            fail(new TransportException(Kind.INTERNAL, label() + " failed: " + e + where, e));
        } finally {
            transport.endUse(connection, guard, keep);
        }
    }

    private Watchdog.Guard arm(TcpConnection connection) {
        return transport.watchdog().arm(deadline, connection::expire);
    }

    /**
     * Moves one chunk straight between the socket and the local segment, unless the submit was
     * aborted (cancelled, or the transport closed): then the connection is closed.
     */
    private void exchange(int worker, TcpConnection connection, long offset, int length) throws IOException, TcpRefusedException {
        ByteBuffer view = local.asSlice(offset, length).asByteBuffer();
        submission.enter(worker, connection);
        try {
            if (read) {
                connection.read(bufferId, accessKey, incarnation, remoteOffset + offset, view);
            } else {
                connection.write(bufferId, accessKey, incarnation, remoteOffset + offset, view);
            }
        } finally {
            submission.exit(worker);
        }
    }

    private void fail(TransportException e) {
        FAILURE.compareAndSet(this, null, e);
    }

    TransportException timeout(Throwable cause) {
        return new TransportException(Kind.TIMEOUT, label() + " timed out after " + TcpTransport.format(Duration.ofNanos(budgetNanos)) + where, cause);
    }

    TransportException refusal(TcpRefusedException refused) {
        String text = label() + " refused by the owner: " + refused.getMessage() + where;
        return new TransportException(ErrorCode.fromWire(refused.code()).kind(), text, refused);
    }

    TransportException ioFailure(IOException e, TcpConnection connection) {
        if ((connection != null && connection.isExpired()) || e instanceof SocketTimeoutException
                || deadline.isExpired()) {
            return timeout(e);
        }
        if (transport.isClosing()) {
            return transport.closedError();
        }
        if (e instanceof TcpProtocolException) {
            return new TransportException(Kind.PROTOCOL, label() + " failed: " + e.getMessage() + where, e);
        }
        String why;
        if (e instanceof ConnectException) {
            why = "cannot connect (" + e.getMessage() + ")";
        } else if (e instanceof UnknownHostException) {
            why = e.getMessage();
        } else if (e instanceof EOFException) {
            why = "connection closed by peer";
        } else if (e instanceof ClosedChannelException) {
            why = "connection closed";
        } else {
            why = e.getMessage() == null ? e.toString() : e.getMessage();
        }
        return new TransportException(Kind.PEER_UNREACHABLE, label() + " failed: " + why + where, e);
    }
}
