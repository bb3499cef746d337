package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportOp;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The requesting end of one connection to a peer's data endpoint: blocking I/O, one exchange at a
 * time, used by one transfer worker at a time (the pool checks it out). Payloads move straight
 * between the socket and the caller's {@link ByteBuffer} view of off-heap memory; the only buffers
 * it owns are two small direct buffers, reused for every exchange: the request header, and the
 * reply's preamble with room for a small read's payload, which then arrives in the same system
 * call as its preamble and is copied out (one {@code read} per small op instead of two).
 *
 * <p>Any exception but {@link TcpRefusedException} leaves the connection in an unknown state:
 * the caller must close it.
 */
final class TcpConnection implements AutoCloseable {

    /**
     * Most bytes a READ chunk may have to be received together with its reply's preamble, in one
     * system call into the connection's own buffer, and then copied to the caller's memory; larger
     * chunks are received straight into the caller's memory after the preamble.
     */
    static final int SMALL_READ_BYTES = 4096;

    private final Endpoint peer;
    private final SocketChannel channel;
    private final ByteBuffer request = ByteBuffer.allocateDirect(TcpProtocol.REQUEST_HEADER_BYTES);
    private final ByteBuffer reply = ByteBuffer.allocateDirect(TcpProtocol.PREAMBLE_BYTES + SMALL_READ_BYTES);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    /** A pipelined round's requests and its replies; allocated by the first round. */
    private ByteBuffer roundOut;
    private ByteBuffer roundIn;
    private MemorySegment roundOutMemory;
    private MemorySegment roundInMemory;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile boolean expired;
    private boolean reused;

    private TcpConnection(Endpoint peer, SocketChannel channel) {
        this.peer = peer;
        this.channel = channel;
    }

    /**
     * Connects to {@code peer}, waiting at most until {@code deadline}.
     *
     * @throws SocketTimeoutException when the deadline passes first
     * @throws UnknownHostException   when the peer's host does not resolve
     * @throws IOException            when the peer cannot be reached
     */
    static TcpConnection connect(Endpoint peer, Deadline deadline) throws IOException {
        long millis = deadline.remainingMillis();
        if (millis == 0) {
            throw new SocketTimeoutException("deadline passed before connecting to " + peer);
        }
        InetSocketAddress address = new InetSocketAddress(peer.host(), peer.port());
        if (address.isUnresolved()) {
            throw new UnknownHostException("cannot resolve host " + peer.host());
        }
        SocketChannel channel = SocketChannel.open();
        try {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            // The socket adaptor gives a timed connect for a blocking channel.
            channel.socket().connect(address, (int) Math.min(millis, Integer.MAX_VALUE));
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return new TcpConnection(peer, channel);
    }

    Endpoint peer() {
        return peer;
    }

    /** The socket, for a {@link TcpMux} that shares the connection (it then is its only user). */
    SocketChannel channel() {
        return channel;
    }

    /**
     * Sends one WRITE chunk: {@code payload}'s remaining bytes go to {@code [offset, offset + n)}
     * of the remote buffer; returns when the owner acknowledged them.
     *
     * @throws TcpRefusedException when the owner refused the request; the connection stays usable
     */
    void write(long bufferId, byte[] accessKey, byte[] incarnation, long offset, ByteBuffer payload) throws IOException, TcpRefusedException {
        int length = payload.remaining();
        putRequest(TcpProtocol.WRITE, bufferId, accessKey, incarnation, offset, length);
        gather[0] = request;
        gather[1] = payload;
        try {
            TcpProtocol.writeFully(channel, gather);
        } finally {
            gather[1] = null;
        }
        reply.clear().limit(TcpProtocol.PREAMBLE_BYTES);
        readReply(TcpProtocol.OK); // an OK reply has no body
    }

    /**
     * Sends one READ chunk: fills {@code destination}'s remaining bytes from
     * {@code [offset, offset + n)} of the remote buffer.
     *
     * @throws TcpRefusedException when the owner refused the request; the connection stays usable
     */
    void read(long bufferId, byte[] accessKey, byte[] incarnation, long offset, ByteBuffer destination) throws IOException, TcpRefusedException {
        int length = destination.remaining();
        putRequest(TcpProtocol.READ, bufferId, accessKey, incarnation, offset, length);
        TcpProtocol.writeFully(channel, request);
        boolean small = length <= SMALL_READ_BYTES;
        // A DATA reply is exactly this long, and nothing follows it before the next request.
        reply.clear().limit(TcpProtocol.PREAMBLE_BYTES + (small ? length : 0));
        int bodyLength = readReply(TcpProtocol.DATA);
        if (bodyLength != length) {
            throw new TcpProtocolException("tcp read chunk size mismatch: expected " + length + ", got " + bodyLength);
        }
        if (small) {
            TcpProtocol.readFully(channel, reply);
            destination.put(reply.flip().position(TcpProtocol.PREAMBLE_BYTES));
        } else {
            TcpProtocol.readFully(channel, destination);
        }
    }

    /**
     * Where the round of pipelined ops that starts at {@code from} ends: as many of
     * {@code ops[from, to)} as keep the round's requests and its expected replies within
     * {@link TcpProtocol#SESSION_BUFFER_BYTES} each (at least one). Each op is at most
     * {@link TcpPipeline#MAX_OP_BYTES}.
     */
    static int roundEnd(List<TransportOp> ops, int from, int to) {
        int requestBytes = 0;
        int replyBytes = 0;
        int i = from;
        for (; i < to; i++) {
            TransportOp op = ops.get(i);
            int length = (int) op.length();
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            requestBytes += TcpProtocol.REQUEST_HEADER_BYTES + (read ? 0 : length);
            replyBytes += TcpProtocol.PREAMBLE_BYTES + (read ? length : 0);
            if (i > from && (requestBytes > TcpProtocol.SESSION_BUFFER_BYTES || replyBytes > TcpProtocol.SESSION_BUFFER_BYTES)) {
                break;
            }
        }
        return i;
    }

    /**
     * Runs {@code ops[from, to)}, a round as {@link #roundEnd} cut it, pipelined: every request
     * (with a WRITE's payload inline) leaves in one {@code write}, then the replies are read in
     * order, each READ's data copied into its local segment. A round of requests fits the owner's
     * session buffer and so does its replies, so neither side blocks writing while the other
     * writes too.
     *
     * @param targets the decoded token of each op, at the same index as in {@code ops}
     * @throws TcpRefusedException when the owner refused one or more ops, after every reply of the
     *                             round was read if the refusals leave the connection usable; its
     *                             {@link TcpRefusedException#opIndex()} names the first refused op
     */
    void round(List<TransportOp> ops, TcpTransport.Target[] targets, int from, int to) throws IOException, TcpRefusedException {
        if (roundOut == null) {
            roundOut = ByteBuffer.allocateDirect(TcpProtocol.SESSION_BUFFER_BYTES);
            roundIn = ByteBuffer.allocateDirect(TcpProtocol.SESSION_BUFFER_BYTES);
            roundOutMemory = MemorySegment.ofBuffer(roundOut);
            roundInMemory = MemorySegment.ofBuffer(roundIn);
        }
        ByteBuffer out = roundOut.clear();
        for (int i = from; i < to; i++) {
            TransportOp op = ops.get(i);
            TcpTransport.Target t = targets[i];
            int length = (int) op.length();
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            TcpProtocol.putPreamble(out, read ? TcpProtocol.READ : TcpProtocol.WRITE,
                    TcpProtocol.REQUEST_FIXED_BYTES + (read ? 0 : length));
            out.putLong(t.bufferId()).put(t.accessKey(), 0, TcpProtocol.KEY_BYTES)
                    .put(t.incarnation(), 0, TcpProtocol.INCARNATION_BYTES).putLong(op.remoteOffset()).putLong(length);
            if (!read) {
                MemorySegment.copy(op.local(), 0, roundOutMemory, out.position(), length);
                out.position(out.position() + length);
            }
        }
        TcpProtocol.writeFully(channel, out.flip());

        ByteBuffer in = roundIn.clear().flip();
        TcpRefusedException refused = null;
        for (int i = from; i < to; i++) {
            TransportOp op = ops.get(i);
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            fillRound(TcpProtocol.PREAMBLE_BYTES);
            int bodyLength;
            try {
                bodyLength = TcpProtocol.replyBodyLength(in.slice(in.position(), TcpProtocol.PREAMBLE_BYTES),
                        read ? TcpProtocol.DATA : TcpProtocol.OK);
            } catch (TcpProtocolException e) {
                throw new TcpProtocolException("peer " + peer + ": " + e.getMessage());
            }
            fillRound(TcpProtocol.PREAMBLE_BYTES + bodyLength);
            int body = in.position() + TcpProtocol.PREAMBLE_BYTES;
            if (in.get(in.position() + 3) == TcpProtocol.ERROR) {
                TcpRefusedException e = TcpProtocol.decodeError(in.slice(body, bodyLength));
                in.position(body + bodyLength);
                if (refused == null) {
                    refused = e.at(i);
                }
                if (!TcpProtocol.isAccessRefusal(e.code())) {
                    throw refused; // the owner may not go on serving this connection: it is discarded
                }
                continue;
            }
            if (read) {
                if (bodyLength != op.length()) {
                    throw new TcpProtocolException("tcp read chunk size mismatch: expected " + op.length() + ", got " + bodyLength);
                }
                MemorySegment.copy(roundInMemory, body, op.local(), 0, bodyLength);
            }
            in.position(body + bodyLength);
        }
        if (in.hasRemaining()) {
            throw new TcpProtocolException("peer " + peer + ": " + in.remaining() + " byte(s) after the last reply of a round");
        }
        if (refused != null) {
            throw refused;
        }
    }

    /** Reads until the round's reply buffer holds at least {@code bytes} unparsed bytes (at most its capacity). */
    private void fillRound(int bytes) throws IOException {
        ByteBuffer in = roundIn;
        if (in.remaining() >= bytes) {
            return;
        }
        in.compact();
        try {
            while (in.position() < bytes) {
                if (channel.read(in) < 0) {
                    throw new EOFException("connection closed by peer");
                }
            }
        } finally {
            in.flip();
        }
    }

    private void putRequest(int type, long bufferId, byte[] accessKey, byte[] incarnation, long offset, int length) {
        int body = TcpProtocol.REQUEST_FIXED_BYTES + (type == TcpProtocol.WRITE ? length : 0);
        request.clear();
        TcpProtocol.putPreamble(request, type, body);
        request.putLong(bufferId).put(accessKey, 0, TcpProtocol.KEY_BYTES).put(incarnation, 0, TcpProtocol.INCARNATION_BYTES)
                .putLong(offset).putLong(length);
        request.flip();
    }

    /**
     * Reads a reply into {@code reply}, at least its preamble and at most up to the buffer's limit;
     * returns the body length of an {@code expected} reply, whose first bytes may already be in
     * the buffer.
     *
     * @throws TcpRefusedException when the reply is an ERROR (read completely)
     */
    private int readReply(int expected) throws IOException, TcpRefusedException {
        while (reply.position() < TcpProtocol.PREAMBLE_BYTES) {
            if (channel.read(reply) < 0) {
                throw new EOFException("connection closed by peer");
            }
        }
        int bodyLength;
        try {
            bodyLength = TcpProtocol.replyBodyLength(reply, expected);
        } catch (TcpProtocolException e) {
            throw new TcpProtocolException("peer " + peer + ": " + e.getMessage());
        }
        if (reply.get(3) == TcpProtocol.ERROR) {
            int received = reply.position() - TcpProtocol.PREAMBLE_BYTES;
            if (received > bodyLength) {
                throw new TcpProtocolException("peer " + peer + ": " + (received - bodyLength)
                        + " byte(s) after an ERROR reply");
            }
            ByteBuffer body = ByteBuffer.allocate(bodyLength); // error path only
            body.put(reply.slice(TcpProtocol.PREAMBLE_BYTES, received));
            TcpProtocol.readFully(channel, body);
            throw TcpProtocol.decodeError(body.flip());
        }
        return bodyLength;
    }

    /** Marks the connection reused from the pool (set by the pool at checkout). */
    void markReused() {
        reused = true;
    }

    /** Whether the pool handed it out before: such a connection may have gone stale meanwhile. */
    boolean isReused() {
        return reused;
    }

    /** Watchdog action: the deadline passed; closes the channel, waking a blocked worker. */
    void expire() {
        expired = true;
        close();
    }

    /** Whether the watchdog closed it. */
    boolean isExpired() {
        return expired;
    }

    boolean isOpen() {
        return !closed.get() && channel.isOpen();
    }

    /** Closes the socket; idempotent, never throws. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing to do: the descriptor is released either way
            }
        }
    }

    @Override
    public String toString() {
        return "TcpConnection[" + peer + (closed.get() ? ", closed" : "") + "]";
    }
}
