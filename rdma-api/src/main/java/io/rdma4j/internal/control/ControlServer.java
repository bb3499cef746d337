package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Endpoint;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The manager's control endpoint: blocking sockets, one virtual thread per connection, frames
 * as in {@link Frames}. A malformed frame closes that connection and nothing else; a handler
 * failure becomes an error reply and the connection stays usable.
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

    private final ServerSocket server;
    private final ControlService service;
    private final Set<Socket> connections = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean closed;

    private ControlServer(ServerSocket server, ControlService service) {
        this.server = server;
        this.service = service;
        this.acceptor = Thread.ofVirtual().name("rdma4j-control-accept-" + server.getLocalPort()).start(this::acceptLoop);
    }

    /** Binds {@code bindHost:port} (0 = ephemeral) and starts serving {@code service}. */
    public static ControlServer start(String bindHost, int port, ControlService service) throws IOException {
        ServerSocket s = new ServerSocket();
        try {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(bindHost, port), 128);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return new ControlServer(s, service);
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
        try (s) {
            s.setTcpNoDelay(true);
            s.setSoTimeout(IDLE_TIMEOUT_MS);
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
            while (!closed) {
                Frames.Frame f = Frames.read(in);
                if (f == null) {
                    return;
                }
                byte[] reply = handle(f);
                if (reply == null) {
                    return;
                }
                out.write(reply);
                out.flush();
            }
        } catch (SocketTimeoutException e) {
            LOG.log(Level.DEBUG, "closing idle control connection from " + s.getRemoteSocketAddress());
        } catch (Frames.ProtocolException e) {
            LOG.log(Level.WARNING, "closing control connection from " + s.getRemoteSocketAddress() + ": " + e.getMessage());
        } catch (IOException e) {
            if (!closed) {
                LOG.log(Level.DEBUG, "control connection from " + s.getRemoteSocketAddress() + " ended: " + e);
            }
        } finally {
            connections.remove(s);
        }
    }

    /** The encoded reply frame, or {@code null} to drop the connection (unknown request type). */
    private byte[] handle(Frames.Frame f) throws Frames.ProtocolException {
        ByteBuffer body = f.body();
        byte type;
        byte[] replyBody;
        try {
            switch (f.type()) {
                case Frames.READINESS -> {
                    PeerReadiness r = service.readiness();
                    ByteBuffer b = ByteBuffer.allocate(1 + Frames.stringSize(r.detail()));
                    b.put((byte) r.state().ordinal());
                    Frames.putString(b, r.detail());
                    type = Frames.OK;
                    replyBody = b.array();
                }
                case Frames.RELEASE -> {
                    if (body.remaining() != 8 + 16) {
                        throw new Frames.ProtocolException("release request of " + body.remaining() + " bytes, expected 24");
                    }
                    long id = body.getLong();
                    byte[] key = new byte[16];
                    body.get(key);
                    service.release(id, key);
                    type = Frames.OK;
                    replyBody = new byte[0];
                }
                case Frames.BACKEND -> {
                    String name = Frames.getString(body);
                    String host = Frames.getString(body);
                    if (body.remaining() < 2) {
                        throw new Frames.ProtocolException("truncated backend request");
                    }
                    int port = Short.toUnsignedInt(body.getShort());
                    Endpoint from;
                    try {
                        from = new Endpoint(host, port);
                    } catch (IllegalArgumentException e) {
                        throw new Frames.ProtocolException("bad requester endpoint: " + e.getMessage());
                    }
                    replyBody = service.backendRequest(name, from, Frames.rest(body));
                    type = Frames.OK;
                }
                default -> throw new Frames.ProtocolException("unknown control request type " + f.type());
            }
        } catch (Frames.ProtocolException e) {
            throw e;
        } catch (BufferAccessException e) {
            type = Frames.ERROR;
            replyBody = Frames.error(Frames.ERR_ACCESS_DENIED, e.getMessage());
        } catch (Exception e) {
            type = Frames.ERROR;
            String message = e.getMessage() == null ? e.toString() : e.getMessage();
            replyBody = Frames.error(e instanceof IllegalArgumentException ? Frames.ERR_BAD_REQUEST : Frames.ERR_FAILED, message);
        }
        ByteBuffer frame = ByteBuffer.allocate(5 + replyBody.length);
        frame.putInt(replyBody.length + 1).put(type).put(replyBody);
        return frame.array();
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
