package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Watchdog;
import io.rdma4j.spi.RegistrationLookup;

import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The data endpoint: serves WRITE and READ requests of peers against this manager's registered
 * buffers ({@link TcpProtocol}).
 *
 * <p>One pool thread accepts; each connection gets its own pool thread doing blocking I/O,
 * so one slow or hostile peer never delays another. Every request is checked: the buffer is
 * looked up by id and access key, the range must lie inside it, and its memory is pinned for
 * exactly one chunk while bytes move between the socket and the segment. Refusals go back to the
 * requester as ERROR replies on a connection that stays usable; a malformed or truncated frame
 * closes that connection only. Once a request's first byte arrived, the rest of the exchange must
 * finish within the frame timeout, or the connection is closed (releasing its pin).
 *
 * <p>Each connection is a {@link TcpSession}. The frame timeout costs a request no watchdog guard: a
 * session notes which request it is serving (one ordered store per request; a volatile one and a
 * look at the watch's flag only for the first request after the session waited for the socket:
 * the requests of a pipelined batch follow each other without the session ever being idle), and
 * while any session serves a request one watchdog
 * guard at a time, re-armed every {@value #WATCH_STEPS}th of the frame timeout (at least every
 * watchdog tick), looks at them all and closes a session that has served the same request for
 * longer than the timeout since it was first seen. A stalled request is so closed between one
 * frame timeout after its first byte and that plus two watch periods (and the watchdog's tick).
 * A look that finds no request being served arms no next one, and the next request to begin arms
 * it again: connections kept open between requests (pooled by their peers) cost no wake-up.
 */
final class TcpDataServer implements AutoCloseable {

    /** Most connections served at once; more are closed on accept. */
    static final int MAX_CONNECTIONS = 1024;

    private static final System.Logger LOG = System.getLogger(TcpDataServer.class.getName());
    /** How many looks at the sessions per frame timeout. */
    static final int WATCH_STEPS = 16;

    private final ServerSocketChannel server;
    private final int port;
    private final RegistrationLookup registrations;
    private final Watchdog watchdog;
    private final TcpThreads threads;
    private final long frameTimeoutNanos;
    private final long watchPeriodNanos;
    private final Set<SocketChannel> connections = ConcurrentHashMap.newKeySet();
    private final Set<TcpSession> sessions = ConcurrentHashMap.newKeySet();
    /** Whether a watch guard is armed (or being armed). */
    private final AtomicBoolean watching = new AtomicBoolean();
    /**
     * The thread inside {@link #armWatch()}, or null: a closed watchdog runs the action at once,
     * on that thread, and then the watch must stop. Only that thread's own call is told apart: a
     * watch the watchdog runs meanwhile, on its own thread, goes on and re-arms.
     */
    private volatile Thread arming;
    private final AtomicLong connectionSeq = new AtomicLong();
    private volatile boolean closed;

    /**
     * Binds {@code bindHost:port} (port 0: any free one). Call {@link #start()} to serve.
     *
     * @throws IOException when the address cannot be bound
     */
    TcpDataServer(String bindHost, int port, RegistrationLookup registrations, Watchdog watchdog,
                  TcpThreads threads, Duration frameTimeout) throws IOException {
        this.registrations = registrations;
        this.watchdog = watchdog;
        this.threads = threads;
        this.frameTimeoutNanos = frameTimeout.toNanos();
        this.watchPeriodNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(Watchdog.TICK_MILLIS), frameTimeoutNanos / WATCH_STEPS);
        this.server = ServerSocketChannel.open();
        try {
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(bindHost, port), 128);
            this.port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
    }

    /** The bound port. */
    int port() {
        return port;
    }

    /** Starts the acceptor thread. */
    void start() {
        threads.start("rdma4j-tcp-accept-" + port, this::acceptLoop, failure -> {
            if (failure != null && !closed) {
                LOG.log(Level.ERROR, "tcp data endpoint on port " + port + " stopped accepting", failure);
            }
        });
    }

    /** Open server-side connections. */
    int connectionCount() {
        return connections.size();
    }

    private void acceptLoop() throws InterruptedException {
        while (!closed) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (ClosedChannelException stopped) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                // Out of descriptors and the like: log, back off briefly, keep serving.
                LOG.log(Level.WARNING, "tcp data endpoint on port " + port + ": accept failed: " + e);
                Thread.sleep(50);
                continue;
            }
            if (connections.size() >= MAX_CONNECTIONS) {
                // Each served connection holds a platform thread: refuse rather than exhaust them.
                LOG.log(Level.WARNING, "tcp data endpoint on port " + port + ": " + MAX_CONNECTIONS
                        + " connections already open; refusing one more");
                closeQuietly(ch);
                continue;
            }
            connections.add(ch);
            if (closed) {
                closeQuietly(ch);
                return;
            }
            long n = connectionSeq.incrementAndGet();
            try {
                threads.start("rdma4j-tcp-serve-" + port + "-" + n, () -> serve(ch), TcpThreads.IGNORE);
            } catch (RuntimeException | OutOfMemoryError e) {
                closeQuietly(ch);
                LOG.log(Level.WARNING, "tcp data endpoint on port " + port + ": cannot start a connection thread: " + e);
            }
        }
    }

    private void serve(SocketChannel ch) {
        SocketAddress remote = null;
        TcpSession session = null;
        try {
            remote = ch.getRemoteAddress();
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            session = new TcpSession(ch, registrations, port, frameTimeoutNanos, () -> closed, this::requestStarted);
            sessions.add(session);
            session.run();
        } catch (EOFException | ClosedChannelException ended) {
            // the peer went away or we are closing: nothing to report
        } catch (TcpProtocolException e) {
            LOG.log(Level.INFO, "tcp data endpoint on port " + port + ": closing connection from " + remote + ": " + e.getMessage());
        } catch (IOException e) {
            if (!closed) {
                LOG.log(Level.DEBUG, "tcp data endpoint on port " + port + ": connection from " + remote + " failed: " + e);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "tcp data endpoint on port " + port + ": connection from " + remote + " failed", e);
        } finally {
            if (session != null) {
                sessions.remove(session);
            }
            connections.remove(ch);
            closeQuietly(ch);
        }
    }

    private void armWatch() {
        arming = Thread.currentThread();
        try {
            watchdog.arm(watchPeriodNanos, this::watch);
        } finally {
            arming = null;
        }
    }

    /** Whether a watch guard is armed (or being armed); false once a look found no request being served. */
    boolean frameWatchArmed() {
        return watching.get();
    }

    /** A session began a request (and says so already): arms the frame watch unless it is armed. */
    private void requestStarted() {
        if (!watching.get() && watching.compareAndSet(false, true)) {
            armWatch();
        }
    }

    /**
     * The frame watch (a watchdog action): closes sessions stalled in a request, and looks again
     * after a watch period while any session serves a request.
     */
    private void watch() {
        if (arming == Thread.currentThread()) {
            return; // the watchdog is closed and ran this at once: its manager is closing, and so are we
        }
        long now = System.nanoTime();
        for (TcpSession s : sessions) {
            s.check(now);
        }
        if (closed) {
            return;
        }
        if (!serving()) {
            watching.set(false);
            // a request begun after the look above armed a watch, or sees `watching` false and arms one
            if (!serving() || !watching.compareAndSet(false, true)) {
                return;
            }
        }
        armWatch();
    }

    private boolean serving() {
        for (TcpSession s : sessions) {
            if (s.inRequest()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Stops accepting and closes every connection; threads blocked on them end. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (SocketChannel ch : connections) {
            closeQuietly(ch);
        }
    }

    static void closeQuietly(java.nio.channels.Channel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // the descriptor is released either way
        }
    }
}
