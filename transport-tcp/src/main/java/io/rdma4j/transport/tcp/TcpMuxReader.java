package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportOp;

import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reader thread of a shared connection ({@link TcpMux}): reads the replies, which the owner
 * sends in request order, and hands each {@link TcpMuxRound} its own in first-in-first-out order,
 * copying a read's data into its local segment while it holds the round ({@code BUSY}). An
 * abandoned round's replies are still read, to stay in step, and discarded. When the connection
 * breaks, the reader fails every round still waiting, with the cause the connection broke with,
 * and ends. See {@link TcpMux} for why a reader thread rather than one of the waiting callers.
 *
 * <p>Everything here but the constructor runs on the reader thread only.
 */
final class TcpMuxReader {

    /** Logged under {@link TcpMux}'s name, as the connection's other lines. */
    private static final System.Logger LOG = System.getLogger(TcpMux.class.getName());

    private final TcpMux mux;
    private final SocketChannel channel;
    private final Endpoint peer;
    /** The mux's count of rounds written and not yet answered: the writer adds, this reader takes away. */
    private final AtomicInteger outstanding;
    private final ByteBuffer in = ByteBuffer.allocateDirect(TcpMux.IN_BUFFER_BYTES);
    private final MemorySegment inMemory = MemorySegment.ofBuffer(in);
    /** The last round answered; its {@code next} is the oldest unanswered. */
    private TcpMuxRound head;
    /** The round whose BUSY state the reader holds, or null. */
    private TcpMuxRound held;

    /**
     * @param first the mux's first (empty) round: the rounds it writes are linked after it
     */
    TcpMuxReader(TcpMux mux, SocketChannel channel, Endpoint peer, AtomicInteger outstanding, TcpMuxRound first) {
        this.mux = mux;
        this.channel = channel;
        this.peer = peer;
        this.outstanding = outstanding;
        this.head = first;
        in.flip();
    }

    /** The reader: reads replies and hands them to their rounds until the connection breaks or retires. */
    void readLoop() {
        try {
            while (true) {
                if (held != null) {
                    held.release(); // never block in read holding a round
                    held = null;
                }
                in.compact();
                int n;
                try {
                    n = channel.read(in);
                } finally {
                    in.flip();
                }
                if (n < 0) {
                    throw new EOFException("connection closed by peer");
                }
                process();
            }
        } catch (IOException | RuntimeException | Error e) {
            if (held != null) {
                held.release();
                held = null;
            }
            mux.breakWith(e);
            failAll();
        }
    }

    /**
     * Hands every complete reply in {@code in} to its round; the round whose replies ran out of
     * the buffer may stay {@link #held}.
     */
    private void process() throws IOException {
        ByteBuffer b = in;
        while (b.remaining() >= TcpProtocol.PREAMBLE_BYTES) {
            TcpMuxRound r = head.next();
            if (r == null) {
                throw new TcpProtocolException("peer " + peer + ": a reply to no request on a shared connection");
            }
            int i = r.replyAt;
            TransportOp op = r.ops.get(i);
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            int at = b.position();
            int bodyLength;
            try {
                bodyLength = TcpProtocol.replyBodyLength(b.slice(at, TcpProtocol.PREAMBLE_BYTES),
                        read ? TcpProtocol.DATA : TcpProtocol.OK);
            } catch (TcpProtocolException e) {
                throw new TcpProtocolException("peer " + peer + ": " + e.getMessage());
            }
            if (b.remaining() < TcpProtocol.PREAMBLE_BYTES + bodyLength) {
                break; // the rest of this reply is still on its way
            }
            if (held != r) {
                if (held != null) {
                    held.release();
                }
                held = r.hold() ? r : null;
            }
            int body = at + TcpProtocol.PREAMBLE_BYTES;
            b.position(body + bodyLength);
            if (b.get(at + 3) == TcpProtocol.ERROR) {
                TcpRefusedException e = TcpProtocol.decodeError(b.slice(body, bodyLength)).at(i);
                if (r.refused == null) {
                    r.refused = e;
                }
                if (!TcpProtocol.isAccessRefusal(e.code())) {
                    // The owner may not go on serving this connection: this round fails with the
                    // refusal, every other with the connection.
                    finishRound(r, e);
                    throw new IOException("peer " + peer + " refused a request on a shared connection in a way "
                            + "that ends the connection: " + e.getMessage());
                }
            } else if (read) {
                if (bodyLength != op.length()) {
                    throw new TcpProtocolException("tcp read chunk size mismatch: expected " + op.length() + ", got " + bodyLength);
                }
                if (held == r && r.localFailure == null) {
                    try {
                        MemorySegment.copy(inMemory, body, op.local(), 0, bodyLength);
                    } catch (IllegalStateException | WrongThreadException e) {
                        r.localFailure = e; // the caller closed its memory: the round fails, the connection is fine
                    }
                }
            }
            r.replyAt = i + 1;
            if (r.replyAt == r.to) {
                Throwable f = r.localFailure != null ? r.localFailure : r.refused;
                finishRound(r, f);
            }
        }
    }

    /** The round got its last reply (or failed): completes it unless it was abandoned, and moves past it. */
    private void finishRound(TcpMuxRound r, Throwable failure) {
        head = r;
        outstanding.decrementAndGet();
        if (held == r) {
            held = null;
            r.complete(failure);
        }
    }

    /** Fails every round still waiting, with the cause the connection broke with. At the reader's end. */
    private void failAll() {
        Throwable f = mux.causeOnceNothingQueues();
        Throwable failure = f instanceof IOException || f instanceof RuntimeException ? f
                : new IOException("shared connection to " + peer + " failed: " + f, f);
        TcpMuxRound r;
        while ((r = head.next()) != null) {
            head = r;
            outstanding.decrementAndGet();
            if (r.hold()) {
                r.complete(failure);
            }
        }
        if (mux.closedUnexpectedly()) {
            LOG.log(Level.DEBUG, () -> "tcp: shared connection to " + peer + " closed: " + f);
        }
    }
}
