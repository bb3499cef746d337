package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A data endpoint that takes one READ request and answers it only when the test says so: the peer
 * "made slow". Its answer is a well-formed DATA reply of the requested length, every payload byte
 * {@link #PAYLOAD_BYTE}. Alternatively it trickles that reply, one byte at a time.
 */
final class SlowPeer implements AutoCloseable {

    static final byte PAYLOAD_BYTE = (byte) 0xA5;

    private final ServerSocketChannel listener;
    private final CompletableFuture<SocketChannel> connection = new CompletableFuture<>();
    private final CompletableFuture<Long> requestedLength = new CompletableFuture<>();
    private final Thread acceptor;

    SlowPeer() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = Thread.ofPlatform().daemon().name("slow-peer").start(this::takeOneRequest);
    }

    private void takeOneRequest() {
        try {
            SocketChannel ch = listener.accept();
            connection.complete(ch);
            ByteBuffer header = ByteBuffer.allocate(TcpProtocol.REQUEST_HEADER_BYTES);
            TcpProtocol.readFully(ch, header);
            if (header.get(3) != TcpProtocol.READ) {
                throw new IOException("slow peer only answers READ requests, got type " + header.get(3));
            }
            requestedLength.complete(header.getLong(TcpProtocol.REQUEST_HEADER_BYTES - Long.BYTES));
        } catch (IOException e) {
            connection.completeExceptionally(e);
            requestedLength.completeExceptionally(e);
        }
    }

    Endpoint endpoint() throws IOException {
        return new Endpoint("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
    }

    /** Waits until a READ request arrived; returns the length it asked for. */
    long awaitRequest() throws Exception {
        return requestedLength.get(TcpTesting.SAFETY.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * Sends the whole DATA reply now. Returns whether every byte was accepted by the socket: false
     * when the requester had closed the connection (the bytes then go nowhere).
     */
    boolean answer() throws Exception {
        return send(reply(awaitRequest()), Long.MAX_VALUE, 0);
    }

    /**
     * Sends the DATA reply one byte every {@code pauseMillis}, for at most {@code bytes} bytes or
     * until the requester closes the connection; returns how many bytes went out.
     */
    long trickle(long bytes, long pauseMillis) throws Exception {
        ByteBuffer reply = reply(awaitRequest());
        long before = reply.position();
        send(reply, bytes, pauseMillis);
        return reply.position() - before;
    }

    private static ByteBuffer reply(long length) {
        ByteBuffer b = ByteBuffer.allocate(TcpProtocol.PREAMBLE_BYTES + (int) length);
        TcpProtocol.putPreamble(b, TcpProtocol.DATA, (int) length);
        while (b.hasRemaining()) {
            b.put(PAYLOAD_BYTE);
        }
        return b.flip();
    }

    private boolean send(ByteBuffer reply, long maxBytes, long pauseMillis) throws Exception {
        SocketChannel ch = connection.get(TcpTesting.SAFETY.toSeconds(), TimeUnit.SECONDS);
        long sent = 0;
        try {
            while (reply.hasRemaining() && sent < maxBytes) {
                if (pauseMillis > 0) {
                    Thread.sleep(pauseMillis); // the peer's pace, not synchronisation
                    reply.limit(reply.position() + 1);
                }
                sent += ch.write(reply);
                reply.limit(reply.capacity());
            }
            return !reply.hasRemaining();
        } catch (IOException closedByRequester) {
            return false;
        }
    }

    /** Whether the requester closed the connection (waits up to {@link TcpTesting#SAFETY}). */
    boolean closedByRequester() throws Exception {
        return SilentPeer.closedByOtherSide(connection.get(TcpTesting.SAFETY.toSeconds(), TimeUnit.SECONDS),
                TcpTesting.SAFETY);
    }

    @Override
    public void close() throws IOException {
        listener.close();
        if (connection.isDone() && !connection.isCompletedExceptionally()) {
            connection.join().close();
        }
        try {
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
