package io.rdma4j.internal.control;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;
import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
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
 * failure. Every call runs on its own virtual thread and is bounded by its deadline.
 */
public final class ControlClient implements AutoCloseable {

    private static final Duration IDLE_EXPIRY = Duration.ofSeconds(60);

    private final Endpoint self;
    private final Cache<Endpoint, Queue<Connection>> idle;
    private volatile boolean closed;

    /** @param self this manager's advertised control endpoint, sent as the requester of backend requests */
    public ControlClient(Endpoint self) {
        this.self = self;
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
    public CompletableFuture<Void> release(Endpoint peer, long bufferId, byte[] accessKey, Deadline deadline) {
        ByteBuffer b = ByteBuffer.allocate(24).putLong(bufferId).put(accessKey, 0, 16);
        return call(peer, Frames.RELEASE, b.array(), deadline, "release of buffer " + bufferId).thenApply(r -> null);
    }

    /**
     * Asks {@code peer} whether its manager is ready, retrying while it is still starting or not
     * yet listening, until the deadline. Never fails: the last observation is the answer.
     */
    public CompletableFuture<PeerReadiness> readiness(Endpoint peer, Deadline deadline) {
        CompletableFuture<PeerReadiness> result = new CompletableFuture<>();
        Thread.ofVirtual().name("rdma4j-control-probe").start(() -> {
            long backoffNanos = 5_000_000L;
            PeerReadiness last;
            while (true) {
                try {
                    ByteBuffer reply = ByteBuffer.wrap(exchange(peer, Frames.READINESS, new byte[0], deadline, "readiness probe"));
                    int state = Byte.toUnsignedInt(reply.get());
                    PeerReadiness.State[] states = PeerReadiness.State.values();
                    if (state >= states.length || state == PeerReadiness.State.UNREACHABLE.ordinal()) {
                        throw new TransportException(Kind.PROTOCOL, "readiness reply with unknown state " + state);
                    }
                    last = new PeerReadiness(peer, states[state], Frames.getString(reply));
                    if (last.state() != PeerReadiness.State.STARTING) {
                        break;
                    }
                } catch (IOException | RuntimeException e) {
                    last = new PeerReadiness(peer, PeerReadiness.State.UNREACHABLE, e.getMessage() == null ? e.toString() : e.getMessage());
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

    /** A backend request; fails with a {@link TransportException}. */
    public CompletableFuture<byte[]> backendRequest(Endpoint peer, String backend, byte[] payload, Deadline deadline) {
        ByteBuffer b = ByteBuffer.allocate(Frames.stringSize(backend) + Frames.stringSize(self.host()) + 2 + payload.length);
        Frames.putString(b, backend);
        Frames.putString(b, self.host());
        b.putShort((short) self.port()).put(payload);
        return call(peer, Frames.BACKEND, b.array(), deadline, backend + " control request");
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

    /** One request/reply; returns the OK body or throws a {@link TransportException}. */
    private byte[] exchange(Endpoint peer, byte type, byte[] body, Deadline deadline, String what) throws IOException {
        if (closed) {
            throw new TransportException(Kind.INTERNAL, "control client closed");
        }
        Connection c = checkout(peer, deadline, what);
        boolean reusable = false;
        try {
            c.socket.setSoTimeout(timeoutMillis(deadline, peer, what));
            Frames.write(c.out, type, body);
            Frames.Frame reply = Frames.read(c.in);
            if (reply == null) {
                throw new TransportException(Kind.PEER_UNREACHABLE, what + " to " + peer + ": connection closed by peer");
            }
            byte[] replyBody = Frames.rest(reply.body());
            reusable = true;
            if (reply.type() == Frames.OK) {
                return replyBody;
            }
            if (reply.type() == Frames.ERROR) {
                ByteBuffer b = ByteBuffer.wrap(replyBody);
                if (!b.hasRemaining()) {
                    reusable = false;
                    throw new TransportException(Kind.PROTOCOL, what + " to " + peer + ": empty error reply");
                }
                byte code = b.get();
                String message = Frames.getString(b);
                throw new TransportException(code == Frames.ERR_ACCESS_DENIED ? Kind.REMOTE_ACCESS
                        : code == Frames.ERR_BAD_REQUEST ? Kind.PROTOCOL : Kind.REMOTE_ACCESS,
                        what + " refused by " + peer + ": " + message);
            }
            reusable = false;
            throw new TransportException(Kind.PROTOCOL, what + " to " + peer + ": unexpected reply type " + reply.type());
        } catch (SocketTimeoutException e) {
            throw new TransportException(Kind.TIMEOUT, what + " to " + peer + " timed out", e);
        } catch (Frames.ProtocolException e) {
            throw new TransportException(Kind.PROTOCOL, what + " to " + peer + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new TransportException(Kind.PEER_UNREACHABLE, what + " to " + peer + " failed: " + e, e);
        } finally {
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

    private Connection checkout(Endpoint peer, Deadline deadline, String what) {
        Queue<Connection> q = idle.getIfPresent(peer);
        if (q != null) {
            Connection c = q.poll();
            if (c != null) {
                return c;
            }
        }
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
        final DataInputStream in;
        final DataOutputStream out;

        Connection(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
            this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        }

        void close() {
            closeQuietly(socket);
        }
    }
}
