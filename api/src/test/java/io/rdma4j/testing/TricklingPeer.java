package io.rdma4j.testing;

import io.rdma4j.spi.Endpoint;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A hostile control peer on a real socket: it accepts connections, optionally reads one request
 * frame ({@code u32 length | body}), then sends its reply one byte at a time, one byte every
 * {@code interval}, for as long as the other side keeps the connection open. A reply of
 * {@code length 1000, type OK} followed by zeros never completes in any test's lifetime.
 */
public final class TricklingPeer implements AutoCloseable {

    private final ServerSocket server;
    private final boolean readRequest;
    private final Duration interval;
    private final Thread acceptor;
    private final CountDownLatch firstByteSent = new CountDownLatch(1);
    private volatile boolean closed;

    private TricklingPeer(boolean readRequest, Duration interval, int receiveBufferBytes) throws IOException {
        this.server = new ServerSocket();
        if (receiveBufferBytes > 0) {
            server.setReceiveBufferSize(receiveBufferBytes);
        }
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        this.readRequest = readRequest;
        this.interval = interval;
        this.acceptor = Thread.ofPlatform().daemon().name("trickling-peer").start(this::acceptLoop);
    }

    /** Reads each request, then trickles an endless reply. */
    public static TricklingPeer answeringSlowly(Duration interval) throws IOException {
        return new TricklingPeer(true, interval, 0);
    }

    /** Never reads what it is sent (with a small receive buffer), and trickles an endless reply. */
    public static TricklingPeer neverReading(Duration interval) throws IOException {
        return new TricklingPeer(false, interval, 4096);
    }

    /** Where it listens. */
    public Endpoint endpoint() {
        return new Endpoint("127.0.0.1", server.getLocalPort());
    }

    /** Counts down once the first reply byte went out on any connection. */
    public CountDownLatch firstByteSent() {
        return firstByteSent;
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                Thread.ofVirtual().name("trickling-peer-conn").start(() -> trickle(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void trickle(Socket s) {
        try (s) {
            if (readRequest) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                in.readFully(new byte[in.readInt()]);
            }
            byte[] reply = {0, 0, 3, (byte) 0xe8, (byte) 0x80}; // length 1000, type OK, then a body of zeros
            OutputStream out = s.getOutputStream();
            for (long i = 0; !closed; i++) {
                out.write(i < reply.length ? reply[(int) i] : 0);
                out.flush();
                firstByteSent.countDown();
                Thread.sleep(interval); // the peer's behaviour under test, not synchronisation
            }
        } catch (IOException | InterruptedException e) {
            // the other side closed the connection: what a deadline does
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
    }
}
