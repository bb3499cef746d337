package io.rdma4j.internal.control;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;
import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.Watchdog;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Talks to peers' control endpoints. Connections are pooled per peer (Caffeine, idle expiry,
 * closed on eviction); a connection serves one request at a time and is discarded after any
 * failure. Every call runs on its own virtual thread and ends by its deadline whatever the peer
 * does (silent, trickling bytes, not reading): connecting is bounded by the time left, and a
 * a guard on the manager's {@link Watchdog} closes the connection when the deadline passes mid-exchange.
 */
public final class ControlClient implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ControlClient.class.getName());

    private static final Duration IDLE_EXPIRY = Duration.ofSeconds(60);

    private final Endpoint self;
    private final Watchdog watchdog;
    private final Cache<Endpoint, Queue<Connection>> idle;
    private volatile boolean closed;

    /** @param self this manager's advertised control endpoint, sent as the requester of transport requests */
    public ControlClient(Endpoint self, Watchdog watchdog) {
        this.self = self;
        this.watchdog = watchdog;
        this.idle = Caffeine.newBuilder()
                .expireAfterAccess(IDLE_EXPIRY)
                .scheduler(Scheduler.systemScheduler())
                .removalListener((Endpoint peer, Queue<Connection> q, RemovalCause cause) -> {
                    if (q != null) {
                        Connection c;
                        while ((c = q.poll()) != null) {
                            c.close();
                        }
                    }
                })
                .build();
    }

    /** Remote release; fails with a {@link TransportException}. */
    public CompletableFuture<Void> release(Endpoint peer, byte[] incarnation, long bufferId, byte[] accessKey,
                                           Deadline deadline) {
        return call(peer, Frames.RELEASE, Frames.release(incarnation, bufferId, accessKey), deadline,
                "release of buffer " + bufferId).thenApply(r -> null);
    }

    /**
     * Asks {@code peer} whether its manager is ready, retrying while it is still starting or not
     * yet listening, until the deadline. Never fails: the last observation is the answer, unless the
     * deadline cut the last try short after an earlier one found the peer unreachable: then that
     * earlier, more telling reason is.
     */
    public CompletableFuture<PeerReadiness> readiness(Endpoint peer, Deadline deadline) {
        CompletableFuture<PeerReadiness> result = new CompletableFuture<>();
        Thread.ofVirtual().name("rdma4j-control-probe").start(() -> {
            long backoffNanos = 5_000_000L;
            PeerReadiness last = null;
            while (true) {
                try {
                    byte[] reply = exchange(peer, Frames.READINESS, new byte[0], deadline, "readiness probe");
                    try {
                        last = Frames.parseReadiness(peer, ByteBuffer.wrap(reply));
                    } catch (Frames.ProtocolException e) {
                        throw new TransportException(Kind.PROTOCOL, "readiness probe of " + peer + ": " + e.getMessage(), e);
                    }
                    if (last.state() != PeerReadiness.State.STARTING) {
                        break;
                    }
                } catch (IOException | RuntimeException e) {
                    String why = e.getMessage() == null ? e.toString() : e.getMessage();
                    if (last != null && last.state() == PeerReadiness.State.UNREACHABLE && deadline.remainingNanos() < 1_000_000L
                            && e instanceof TransportException te && te.kind() == Kind.TIMEOUT) {
                        // the deadline cut the last try short: what the try before it found says more
                        last = new PeerReadiness(peer, last.state(), last.detail() + " (still so when the deadline passed)");
                        break;
                    }
                    last = new PeerReadiness(peer, PeerReadiness.State.UNREACHABLE, why);
                    if (e instanceof TransportException te && te.kind() == Kind.PROTOCOL) {
                        break;
                    }
                }
                if (closed || deadline.remainingNanos() <= backoffNanos) {
                    break;
                }
                LockSupport.parkNanos(backoffNanos); // retry backoff, bounded by the deadline
                backoffNanos = Math.min(backoffNanos * 2, 200_000_000L);
            }
            result.complete(last);
        });
        return result;
    }

    /** A transport request; fails with a {@link TransportException}. */
    public CompletableFuture<byte[]> transportRequest(Endpoint peer, String transport, byte[] payload, Deadline deadline) {
        return call(peer, Frames.TRANSPORT, Frames.transportRequest(transport, self, payload), deadline,
                transport + " control request");
    }

    private CompletableFuture<byte[]> call(Endpoint peer, byte type, byte[] body, Deadline deadline, String what) {
        CompletableFuture<byte[]> result = new CompletableFuture<>();
        Thread.ofVirtual().name("rdma4j-control-call").start(() -> {
            try {
                result.complete(exchange(peer, type, body, deadline, what));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        });
        return result;
    }

    /**
     * One request/reply, ended by the deadline; returns the OK body or throws a {@link TransportException}.
     * A pooled connection the peer has closed meanwhile (it restarted on its endpoint, or closed
     * the connection as idle) fails at once, before any reply: the request goes once more over a
     * new connection.
     */
    private byte[] exchange(Endpoint peer, byte type, byte[] body, Deadline deadline, String what) throws IOException {
        if (closed) {
            throw new TransportException(Kind.INTERNAL, "control client closed");
        }
        byte[] request = Frames.encode(type, body);
        Connection pooled = pooled(peer);
        if (pooled != null) {
            try {
                return exchange(pooled, true, peer, request, deadline, what);
            } catch (ClosedWhileIdle e) {
                LOG.log(System.Logger.Level.DEBUG, "control connection to {0} was closed while idle; {1} goes over a new one",
                        peer, what);
            }
        }
        return exchange(connect(peer, deadline, what), false, peer, request, deadline, what);
    }

    /** The peer closed a pooled connection before it answered anything on it. */
    private static final class ClosedWhileIdle extends RuntimeException {
        ClosedWhileIdle() {
            super(null, null, false, false);
        }
    }

    private byte[] exchange(Connection c, boolean pooled, Endpoint peer, byte[] request, Deadline deadline, String what)
            throws IOException {
        boolean reusable = false;
        Watchdog.Guard guard = watchdog.arm(deadline, c::close);
        try {
            try {
                c.out.write(request);
                c.out.flush();
            } catch (SocketException e) {
                if (pooled && !guard.fired()) {
                    throw new ClosedWhileIdle();        // reset by the peer: nothing was read
                }
                throw e;
            }
            int first;
            try {
                c.in.mark(1);
                first = c.in.read();        // the reply's first byte: until it comes, the peer has answered nothing
            } catch (SocketException e) {
                if (pooled && !guard.fired()) {
                    throw new ClosedWhileIdle();
                }
                throw e;
            }
            if (first < 0 && pooled && !guard.fired()) {
                throw new ClosedWhileIdle();
            }
            c.in.reset();
            Frames.Frame reply = Frames.read(c.in);
            if (reply == null) {
                throw new TransportException(Kind.PEER_UNREACHABLE, what + " to " + peer + ": connection closed by peer");
            }
            // A guard that fired has closed the socket, even if the reply made it in time.
            reusable = guard.disarm();
            if (reply.type() == Frames.OK) {
                return Frames.rest(reply.body());
            }
            if (reply.type() == Frames.ERROR) {
                Frames.Error error = Frames.parseError(reply.body());
                throw ErrorCode.fromWire(Byte.toUnsignedInt(error.code())).toException(
                        what + " refused by " + peer + ": " + error.message());
            }
            reusable = false;
            throw new TransportException(Kind.PROTOCOL, what + " to " + peer + ": unexpected reply type " + reply.type());
        } catch (IOException e) {
            reusable = false;
            if (guard.fired() || e instanceof SocketTimeoutException) {
                throw new TransportException(Kind.TIMEOUT, what + " to " + peer + " timed out: no complete reply by the "
                        + "deadline", e);
            }
            if (e instanceof Frames.ProtocolException) {
                throw new TransportException(Kind.PROTOCOL, what + " to " + peer + ": " + e.getMessage(), e);
            }
            throw new TransportException(Kind.PEER_UNREACHABLE, what + " to " + peer + " failed: " + e, e);
        } finally {
            guard.disarm();
            if (reusable && !closed) {
                giveBack(peer, c);
            } else {
                c.close();
            }
        }
    }

    private void giveBack(Endpoint peer, Connection c) {
        Queue<Connection> q = idle.get(peer, p -> new ConcurrentLinkedQueue<>());
        q.add(c);
        // The queue may have been evicted (and drained) meanwhile, or the client closed: then
        // nobody would ever close this connection.
        if ((closed || idle.getIfPresent(peer) != q) && q.remove(c)) {
            c.close();
        }
    }

    /** A pooled idle connection to {@code peer}, taken out of the pool, or null. */
    private Connection pooled(Endpoint peer) {
        Queue<Connection> q = idle.getIfPresent(peer);
        return q == null ? null : q.poll();
    }

    /** A new connection to {@code peer}, connected within the time left. */
    private Connection connect(Endpoint peer, Deadline deadline, String what) {
        int timeout = timeoutMillis(deadline, peer, what);
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            InetSocketAddress address = new InetSocketAddress(peer.host(), peer.port());
            if (address.isUnresolved()) {
                throw new TransportException(Kind.PEER_UNREACHABLE, what + ": cannot resolve host " + peer.host());
            }
            s.connect(address, timeout);
            return new Connection(s);
        } catch (SocketTimeoutException e) {
            closeQuietly(s);
            throw new TransportException(Kind.TIMEOUT, what + ": connecting to " + peer + " timed out", e);
        } catch (ConnectException e) {
            closeQuietly(s);
            throw new TransportException(Kind.PEER_UNREACHABLE, what + ": nothing listens at " + peer + " (" + e.getMessage() + ")", e);
        } catch (IOException e) {
            closeQuietly(s);
            throw new TransportException(Kind.PEER_UNREACHABLE, what + ": cannot connect to " + peer + ": " + e, e);
        }
    }

    private static int timeoutMillis(Deadline deadline, Endpoint peer, String what) {
        long ms = deadline.remainingMillis();
        if (ms <= 0) {
            throw new TransportException(Kind.TIMEOUT, what + " to " + peer + " timed out (deadline passed)");
        }
        return (int) Math.min(ms, Integer.MAX_VALUE);
    }

    /** Number of pooled idle connections (tests, diagnostics). */
    public int idleConnectionCount() {
        idle.cleanUp();
        return idle.asMap().values().stream().mapToInt(Queue::size).sum();
    }

    /** Closes every pooled connection; later calls fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        idle.invalidateAll();
        idle.cleanUp();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static final class Connection {
        final Socket socket;
        final InputStream in;
        final OutputStream out;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream());
            this.out = new BufferedOutputStream(socket.getOutputStream());
        }

        void close() {
            closeQuietly(socket);
        }
    }
}
