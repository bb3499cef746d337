package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A listener that accepts connections and never answers: the peer that "stops answering".
 * Accepted connections are handed to the test, which can check that the other side closed them.
 */
final class SilentPeer implements AutoCloseable {

    private final ServerSocketChannel listener;
    private final BlockingQueue<SocketChannel> accepted = new LinkedBlockingQueue<>();
    private final Thread acceptor;

    SilentPeer() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = Thread.ofVirtual().name("silent-peer").start(() -> {
            try {
                while (true) {
                    accepted.add(listener.accept());
                }
            } catch (IOException closed) {
                // test over
            }
        });
    }

    Endpoint endpoint() throws IOException {
        return new Endpoint("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
    }

    /** The next connection it accepted (waits for it). */
    SocketChannel nextConnection() throws InterruptedException {
        SocketChannel ch = accepted.poll(TcpTesting.SAFETY.toSeconds(), TimeUnit.SECONDS);
        if (ch == null) {
            throw new AssertionError("nobody connected within " + TcpTesting.SAFETY);
        }
        return ch;
    }

    /**
     * Reads and discards until the other side closes; true when it did within {@code safety}.
     */
    static boolean closedByOtherSide(SocketChannel ch, Duration safety) throws IOException {
        ch.socket().setSoTimeout((int) safety.toMillis());
        var in = ch.socket().getInputStream();
        byte[] sink = new byte[64 * 1024];
        try {
            while (in.read(sink) >= 0) {
                // the request bytes it sent
            }
            return true;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (SocketChannel ch : accepted) {
            ch.close();
        }
        try {
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
