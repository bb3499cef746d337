package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.RdmaReleaseException;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.Watchdog;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The manager's control endpoint: blocking sockets, one virtual thread per connection, frames
 * as in {@link Frames}. A malformed frame closes that connection and nothing else; a handler
 * failure becomes an error reply and the connection stays usable. Between requests a connection
 * may idle; once a request's first byte is in, the rest of it, and later the reply, must each
 * go through within the frame timeout, or the connection is closed: a peer trickling bytes
 * cannot hold a connection thread.
 *
 * <pre>
 *   acceptor (virtual) --accept--&gt; connection thread (virtual): read frame -&gt; ControlService -&gt; reply
 * </pre>
 */
public final class ControlServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ControlServer.class.getName());
    /** A connection silent for this long between requests is closed. */
    private static final int IDLE_TIMEOUT_MS = 10 * 60_000;
    private static final long ACCEPT_BACKOFF_NANOS = 50_000_000L;
    /** How long the rest of a started request, or a reply, may take to go through. */
    static final Duration FRAME_TIMEOUT = Duration.ofSeconds(30);

    private final ServerSocket server;
    private final ControlService service;
    private Watchdog watchdog; // set before the acceptor starts, read by the threads it starts
    private final Duration frameTimeout;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    private ControlServer(ServerSocket server, ControlService service, Duration frameTimeout) {
        this.server = server;
        this.service = service;
        this.frameTimeout = frameTimeout;
        this.acceptor = Thread.ofVirtual().name("rdma4j-control-accept-" + server.getLocalPort()).unstarted(this::acceptLoop);
    }

    /**
     * Binds {@code bindHost:port} (0 = ephemeral) without serving yet, so that the caller learns the
     * port before it starts anything else; {@link #serve(Watchdog)} starts serving.
     */
    public static ControlServer bind(String bindHost, int port, ControlService service) throws IOException {
        return bind(bindHost, port, service, FRAME_TIMEOUT);
    }

    /** {@link #bind(String, int, ControlService)} with another frame timeout (tests). */
    static ControlServer bind(String bindHost, int port, ControlService service, Duration frameTimeout) throws IOException {
        ServerSocket s = new ServerSocket();
        try {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(bindHost, port), 128);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return new ControlServer(s, service, frameTimeout);
    }

    /**
     * Starts accepting; every request and reply is bounded in time by a guard on {@code watchdog}.
     *
     * @return this server
     */
    public ControlServer serve(Watchdog watchdog) {
        this.watchdog = watchdog;
        acceptor.start();
        return this;
    }

    /** Binds and serves at once (tests). */
    static ControlServer start(String bindHost, int port, ControlService service, Watchdog watchdog, Duration frameTimeout)
            throws IOException {
        return bind(bindHost, port, service, frameTimeout).serve(watchdog);
    }

    /** The bound address (its port is the real one when 0 was asked). */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    /** Number of open connections (tests, diagnostics). */
    public int connectionCount() {
        return connections.size();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                if (closed || server.isClosed()) {
                    return;
                }
                // Out of file descriptors and the like: keep the endpoint, back off briefly.
                LOG.log(Level.WARNING, "control endpoint " + localAddress() + ": accept failed: " + e);
                LockSupport.parkNanos(ACCEPT_BACKOFF_NANOS);
                continue;
            }
            connections.add(s);
            if (closed) {
                closeQuietly(s);
                return;
            }
            Thread.ofVirtual().name("rdma4j-control-conn").start(() -> serve(s));
        }
    }

    private void serve(Socket s) {
        Watchdog.Guard guard = null;
        try (s) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(IDLE_TIMEOUT_MS);
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = new BufferedOutputStream(s.getOutputStream());
            while (!closed) {
                int first = in.read();
                if (first < 0) {
                    return;
                }
                guard = watchdog.arm(frameTimeout.toNanos(), () -> closeQuietly(s));
                Frames.Frame f = Frames.readRest(first, in);
                guard.disarm();
                byte[] reply = handle(f);
                guard = watchdog.arm(frameTimeout.toNanos(), () -> closeQuietly(s));
                out.write(reply);
                out.flush();
                guard.disarm();
            }
        } catch (SocketTimeoutException e) {
            LOG.log(Level.DEBUG, "closing idle control connection from " + s.getRemoteSocketAddress());
        } catch (IOException e) {
            if (guard != null && guard.fired()) {
                LOG.log(Level.INFO, "control endpoint " + localAddress() + ": closed a connection from "
                        + s.getRemoteSocketAddress() + " whose request or reply did not go through within " + frameTimeout);
            } else if (e instanceof Frames.ProtocolException) {
                LOG.log(Level.WARNING, "closing control connection from " + s.getRemoteSocketAddress() + ": " + e.getMessage());
            } else if (!closed) {
                LOG.log(Level.DEBUG, "control connection from " + s.getRemoteSocketAddress() + " ended: " + e);
            }
        } finally {
            if (guard != null) {
                guard.disarm();
            }
            connections.remove(s);
        }
    }

    /** The wire code for what a request handler threw: the one error table. */
    static ErrorCode errorCode(Exception e) {
        if (e instanceof BufferAccessException bae) {
            return ErrorCode.of(bae.reason());
        }
        if (e instanceof RdmaReleaseException) {
            return ErrorCode.RELEASE_FAILED;
        }
        if (e instanceof IllegalArgumentException) {
            return ErrorCode.BAD_REQUEST;
        }
        return ErrorCode.FAILED;
    }

    /** The encoded reply frame; a malformed request throws, and the connection is dropped. */
    private byte[] handle(Frames.Frame f) throws IOException {
        byte type;
        byte[] replyBody;
        try {
            switch (f.type()) {
                case Frames.READINESS -> {
                    PeerReadiness r = service.readiness();
                    replyBody = Frames.readiness(r.state(), r.detail());
                }
                case Frames.RELEASE -> {
                    Frames.Release release = Frames.parseRelease(f.body());
                    service.release(release.incarnation(), release.bufferId(), release.accessKey());
                    replyBody = new byte[0];
                }
                case Frames.TRANSPORT -> {
                    Frames.TransportRequest request = Frames.parseTransportRequest(f.body());
                    replyBody = service.transportRequest(request.transport(), request.from(), request.payload());
                }
                default -> throw new Frames.ProtocolException("unknown control request type " + f.type());
            }
            type = Frames.OK;
        } catch (Frames.ProtocolException e) {
            throw e;
        } catch (Exception e) {
            type = Frames.ERROR;
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            replyBody = Frames.error((byte) errorCode(e).wire(), message);
        }
        try {
            return Frames.encode(type, replyBody);
        } catch (IOException tooLarge) { // a handler's reply over the limit: say so instead
            return Frames.encode(Frames.ERROR, Frames.error((byte) ErrorCode.FAILED.wire(), tooLarge.getMessage()));
        }
    }

    /** Stops listening, closes every connection. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "closing control listener", e);
        }
        connections.forEach(ControlServer::closeQuietly);
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}
