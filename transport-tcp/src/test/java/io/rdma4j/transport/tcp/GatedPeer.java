package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A data endpoint that speaks the protocol (any number of connections, pipelined requests) but
 * holds every reply until the test {@linkplain #open() opens the gate}; from then on it answers at
 * once, in request order. A READ gets DATA of the requested length, every byte {@link #PAYLOAD_BYTE};
 * a WRITE gets OK; a READ at {@link #REFUSED_OFFSET} or beyond gets ERROR OUT_OF_RANGE. It counts the connections it accepted and the requests it read.
 */
final class GatedPeer implements AutoCloseable {

    static final byte PAYLOAD_BYTE = (byte) 0x5C;
    /** A READ at this offset or beyond is refused with ERROR OUT_OF_RANGE (the connection stays usable). */
    static final long REFUSED_OFFSET = 1 << 20;

    private final ServerSocketChannel listener;
    private final Thread acceptor;
    private final List<Connection> connections = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();
    private volatile boolean open;

    GatedPeer() throws IOException {
        listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        acceptor = Thread.ofPlatform().daemon().name("gated-peer").start(this::acceptLoop);
    }

    private void acceptLoop() {
        try {
            while (true) {
                Connection c = new Connection(listener.accept());
                connections.add(c);
                Thread.ofPlatform().daemon().name("gated-peer-" + connections.size()).start(c::serve);
            }
        } catch (IOException closed) {
            // the test closed the listener
        }
    }

    Endpoint endpoint() throws IOException {
        return new Endpoint("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
    }

    /** Connections accepted so far. */
    int connectionCount() {
        return connections.size();
    }

    /** Requests read so far, all connections. */
    int requestCount() {
        return requests.get();
    }

    /** Sends the replies held so far and answers every later request at once. */
    void open() {
        open = true;
        for (Connection c : connections) {
            try {
                c.flush();
            } catch (IOException hungUp) {
                // the requester closed that connection: its replies go nowhere
            }
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        for (Connection c : connections) {
            c.ch.close();
        }
        try {
            acceptor.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private final class Connection {
        private final SocketChannel ch;
        private final List<ByteBuffer> held = new ArrayList<>();

        Connection(SocketChannel ch) {
            this.ch = ch;
        }

        void serve() {
            ByteBuffer header = ByteBuffer.allocate(TcpProtocol.REQUEST_HEADER_BYTES);
            try {
                while (true) {
                    header.clear();
                    TcpProtocol.readFully(ch, header);
                    long length = header.getLong(TcpProtocol.LENGTH_AT);
                    ByteBuffer reply;
                    if (header.get(3) == TcpProtocol.WRITE) {
                        TcpProtocol.readFully(ch, ByteBuffer.allocate((int) length)); // the payload, dropped
                        reply = ByteBuffer.allocate(TcpProtocol.PREAMBLE_BYTES);
                        TcpProtocol.putPreamble(reply, TcpProtocol.OK, 0);
                    } else if (header.getLong(TcpProtocol.OFFSET_AT) >= REFUSED_OFFSET) {
                        reply = TcpProtocol.errorFrame(ErrorCode.OUT_OF_RANGE.wire(), "gated peer: offset out of range");
                        reply.position(reply.limit());
                    } else {
                        reply = ByteBuffer.allocate(TcpProtocol.PREAMBLE_BYTES + (int) length);
                        TcpProtocol.putPreamble(reply, TcpProtocol.DATA, (int) length);
                        while (reply.hasRemaining()) {
                            reply.put(PAYLOAD_BYTE);
                        }
                    }
                    synchronized (this) {
                        held.add(reply.flip());
                    }
                    requests.incrementAndGet();
                    if (open) {
                        flush();
                    }
                }
            } catch (IOException ended) {
                // the requester hung up, or the test closed us
            }
        }

        synchronized void flush() throws IOException {
            for (ByteBuffer b : held) {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
            held.clear();
        }
    }
}
