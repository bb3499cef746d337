package io.rdma4j.transport.tcp;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.RegistrationLookup;

import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * One connection of the data endpoint ({@link TcpDataServer}) and its request loop; runs on its
 * own pool thread.
 *
 * <p>Requests are read through a buffer ({@code in}): one {@code read} takes every request a
 * peer pipelined (a batch of small ops arrives in one or two segments), and the header of
 * each is parsed from there. Replies of small ops (OK, ERROR, DATA up to
 * {@link TcpProtocol#INLINE_REPLY_BYTES}) are gathered in {@code out}, which is written
 * before the session next waits for the socket: a pipelined batch is answered in one
 * {@code write}, a lone request at once, as before. Large payloads bypass both buffers and
 * move straight between the socket and the registered segment.
 *
 * <p>Per request of a pipelined batch of small ops the session allocates nothing: headers are
 * parsed in place in {@code in}, a WRITE whose payload is buffered is one copy from there into the
 * registered segment, and a request for the buffer the connection was last allowed takes no
 * lookup ({@link #checkedBuffer}); every request still takes its own pin, and gets its own refusal.
 */
final class TcpSession {
    private static final System.Logger LOG = System.getLogger(TcpDataServer.class.getName());
    private static final VarHandle REQUEST;

    static {
        try {
            REQUEST = MethodHandles.lookup().findVarHandle(TcpSession.class, "request", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SocketChannel ch;
    private final RegistrationLookup registrations;
    private final int port;
    private final long frameTimeoutNanos;
    /** Whether the data endpoint is closing (then a closed connection is not worth a log line). */
    private final BooleanSupplier serverClosed;
    /** Told once a request began (after {@link #inRequest} says so): the server's frame watch looks while requests are served. */
    private final Runnable requestStarted;
    private final ByteBuffer in = ByteBuffer.allocateDirect(TcpProtocol.SESSION_BUFFER_BYTES).flip();
    /** {@code in}'s memory, whole, for copies of buffered WRITE payloads into registered segments. */
    private final MemorySegment inMemory = MemorySegment.ofBuffer(in.duplicate().clear());
    private final ByteBuffer out = ByteBuffer.allocateDirect(TcpProtocol.SESSION_BUFFER_BYTES);
    /** {@code out}'s memory, whole, for copies from registered segments. */
    private final MemorySegment outMemory = MemorySegment.ofBuffer(out);
    private final ByteBuffer dataPreamble = ByteBuffer.allocateDirect(TcpProtocol.PREAMBLE_BYTES);
    private final ByteBuffer[] gather = new ByteBuffer[2];
    private final byte[] key = new byte[TcpProtocol.KEY_BYTES];
    private final byte[] incarnation = new byte[TcpProtocol.INCARNATION_BYTES];
    /** The request being parsed: its access key and incarnation as two longs each (big-endian, as on the wire). */
    private long key0;
    private long key1;
    private long incarnation0;
    private long incarnation1;
    /**
     * The buffer of the last request this connection was allowed, with the id, key and incarnation
     * it was allowed by ({@link #checkedBuffer}); null before the first and after a refused pin.
     */
    private LocalBuffer allowed;
    private long allowedId;
    private long allowedKey0;
    private long allowedKey1;
    private long allowedIncarnation0;
    private long allowedIncarnation1;
    /** Requests begun on this connection (this session's thread only). */
    private long requests;
    /** The request being served, or 0 between requests (written in order through REQUEST, read by the watch). */
    @SuppressWarnings("unused")
    private long request;
    /** The request the watch last saw, and when it first saw it (the watch only). */
    private long seenRequest;
    private long seenAtNanos;

    TcpSession(SocketChannel ch, RegistrationLookup registrations, int port, long frameTimeoutNanos,
               BooleanSupplier serverClosed, Runnable requestStarted) {
        this.requestStarted = requestStarted;
        this.ch = ch;
        this.registrations = registrations;
        this.port = port;
        this.frameTimeoutNanos = frameTimeoutNanos;
        this.serverClosed = serverClosed;
    }

    void run() throws IOException {
        while (true) {
            if (!in.hasRemaining()) {
                // Between requests a connection may idle as long as the peer likes (it is pooled there).
                REQUEST.setRelease(this, 0L);
                if (!fill()) {
                    return; // clean end at a frame boundary
                }
                // From the first byte on, the exchange is bounded: a stalled peer cannot hold a pin.
                REQUEST.setVolatile(this, ++requests);    // volatile: ordered before the watch's flag, read next
                requestStarted.run();
            } else {
                // The next request of those already buffered: the session never said it was idle since the
                // last one began, so the watch is armed; a new number tells it that this one is a new request.
                REQUEST.setRelease(this, ++requests);
            }
            exchange();
        }
    }

    /**
     * Writes the gathered replies, then reads what the socket has into {@code in} (after the
     * bytes not yet parsed), blocking until at least one byte came.
     *
     * @return false at the end of the stream
     */
    private boolean fill() throws IOException {
        flush();
        in.compact();
        try {
            int n;
            while ((n = ch.read(in)) == 0) {
                // a blocking channel returns 0 only for a full buffer, which compact() rules out
            }
            return n > 0;
        } finally {
            in.flip();
        }
    }

    /** Reads until {@code in} holds at least {@code bytes} unparsed bytes (at most its capacity). */
    private void need(int bytes, String what) throws IOException {
        while (in.remaining() < bytes) {
            if (!fill()) {
                throw new TcpProtocolException("truncated frame: connection closed after " + in.remaining()
                        + " byte(s) of a request " + what);
            }
        }
    }

    /** Writes the gathered replies, if any. */
    private void flush() throws IOException {
        if (out.position() > 0) {
            out.flip();
            TcpProtocol.writeFully(ch, out);
            out.clear();
        }
    }

    /** Makes room for {@code bytes} more bytes of replies in {@code out}, writing what it holds when needed. */
    private ByteBuffer room(int bytes) throws IOException {
        if (out.remaining() < bytes) {
            flush();
        }
        return out;
    }

    /** Whether a request is being served (its first byte came, its reply is not yet gathered). */
    boolean inRequest() {
        return (long) REQUEST.getVolatile(this) != 0;
    }

    /** The watch's look at {@code now}: closes the connection when one request has been served for too long. */
    void check(long now) {
        long r = (long) REQUEST.getAcquire(this);
        if (r == 0 || r != seenRequest) {
            seenRequest = r;
            seenAtNanos = now; // it began at or before this
        } else if (now - seenAtNanos >= frameTimeoutNanos) {
            abandon();
        }
    }

    /** The watch's action: the peer started a request and did not finish it in time. */
    private void abandon() {
        if (!serverClosed.getAsBoolean()) {
            LOG.log(Level.INFO, "tcp data endpoint on port " + port + ": closing a connection whose request was not "
                    + "completed within " + Duration.ofNanos(frameTimeoutNanos) + " (rdma.tcp.idleTimeout)");
        }
        TcpDataServer.closeQuietly(ch);
    }

    private void exchange() throws IOException {
        // Check the preamble as soon as it is in: garbage is refused without waiting for a whole header.
        need(TcpProtocol.PREAMBLE_BYTES, "preamble");
        // Parsed in place at absolute positions of `in` (no slice per request).
        int at = in.position();
        try {
            TcpProtocol.requestBodyLength(in, at);
        } catch (TcpProtocolException e) {
            malformed(e.getMessage());
        }
        need(TcpProtocol.REQUEST_HEADER_BYTES, "header");
        at = in.position(); // need() may have compacted the buffer
        int length = 0;
        try {
            length = TcpProtocol.requestLength(in, at);
        } catch (TcpProtocolException e) {
            malformed(e.getMessage());
        }
        long bufferId = in.getLong(at + TcpProtocol.ID_AT);
        key0 = in.getLong(at + TcpProtocol.KEY_AT);
        key1 = in.getLong(at + TcpProtocol.KEY_AT + 8);
        incarnation0 = in.getLong(at + TcpProtocol.INCARNATION_AT);
        incarnation1 = in.getLong(at + TcpProtocol.INCARNATION_AT + 8);
        long offset = in.getLong(at + TcpProtocol.OFFSET_AT);
        boolean write = in.get(at + 3) == TcpProtocol.WRITE;
        in.position(at + TcpProtocol.REQUEST_HEADER_BYTES);
        if (write) {
            serveWrite(bufferId, offset, length);
        } else {
            serveRead(bufferId, offset, length);
        }
    }

    private void serveWrite(long bufferId, long offset, int length) throws IOException {
        LocalBuffer buffer;
        try {
            buffer = checkedBuffer(bufferId, offset, length);
        } catch (BufferAccessException refused) {
            drain(length);
            refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
            return;
        }
        if (buffer.readOnly()) {        // a read-only registration: refused whatever the holder's token claims
            drain(length);
            refuse(ErrorCode.READ_ONLY.wire(), BufferAccessException.readOnly(bufferId).getMessage());
            return;
        }
        if (in.remaining() >= length) {
            serveBufferedWrite(buffer, bufferId, offset, length);
            return;
        }
        ByteBuffer destination = null;
        try (LocalBuffer.Pin pin = buffer.pin()) {
            destination = buffer.segment().asSlice(offset, length).asByteBuffer();
            // The payload's first bytes may have come with the header; the rest straight from the socket.
            int buffered = Math.min(in.remaining(), length);
            if (buffered > 0) {
                destination.put(in.slice(in.position(), buffered));
                in.position(in.position() + buffered);
            }
            if (destination.hasRemaining()) {
                flush(); // the peer may wait for these replies before it sends the rest
                TcpProtocol.readFully(ch, destination);
            }
        } catch (BufferAccessException refused) {
            forgetAllowed();
            drain(length);
            refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
            return;
        } catch (IllegalStateException | WrongThreadException memoryGone) {
            forgetAllowed();
            // The bytes not yet taken are still on the wire.
            drain(destination == null ? length : destination.remaining());
            refuse(ErrorCode.OWNER_MEMORY_CLOSED.wire(), unusable(bufferId, memoryGone));
            return;
        }
        TcpProtocol.putPreamble(room(TcpProtocol.PREAMBLE_BYTES), TcpProtocol.OK, 0);
    }

    /**
     * A WRITE whose payload is all in {@code in} already (every small write of a pipelined batch):
     * one copy from the buffer's memory into the registered segment, no view objects.
     */
    private void serveBufferedWrite(LocalBuffer buffer, long bufferId, long offset, int length) throws IOException {
        int from = in.position();
        in.position(from + length); // the payload is consumed whether it is taken or refused
        try (LocalBuffer.Pin pin = buffer.pin()) {
            MemorySegment.copy(inMemory, from, buffer.segment(), offset, length);
        } catch (BufferAccessException refused) {
            forgetAllowed();
            refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
            return;
        } catch (IllegalStateException | WrongThreadException memoryGone) {
            forgetAllowed();
            refuse(ErrorCode.OWNER_MEMORY_CLOSED.wire(), unusable(bufferId, memoryGone));
            return;
        }
        TcpProtocol.putPreamble(room(TcpProtocol.PREAMBLE_BYTES), TcpProtocol.OK, 0);
    }

    private void serveRead(long bufferId, long offset, int length) throws IOException {
        LocalBuffer buffer;
        try {
            buffer = checkedBuffer(bufferId, offset, length);
        } catch (BufferAccessException refused) {
            refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
            return;
        }
        if (length <= TcpProtocol.INLINE_REPLY_BYTES) {
            ByteBuffer reply = room(TcpProtocol.PREAMBLE_BYTES + length);
            int start = reply.position();
            try (LocalBuffer.Pin pin = buffer.pin()) {
                TcpProtocol.putPreamble(reply, TcpProtocol.DATA, length);
                MemorySegment.copy(buffer.segment(), offset, outMemory, reply.position(), length);
                reply.position(reply.position() + length);
            } catch (BufferAccessException refused) {
                reply.position(start);
                refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
            } catch (IllegalStateException | WrongThreadException memoryGone) {
                reply.position(start);
                refuse(ErrorCode.OWNER_MEMORY_CLOSED.wire(), unusable(bufferId, memoryGone));
            }
            return;
        }
        flush(); // replies leave in request order
        dataPreamble.clear();
        TcpProtocol.putPreamble(dataPreamble, TcpProtocol.DATA, length);
        dataPreamble.flip();
        gather[0] = dataPreamble;
        try (LocalBuffer.Pin pin = buffer.pin()) {
            gather[1] = buffer.segment().asSlice(offset, length).asByteBuffer();
            TcpProtocol.writeFully(ch, gather);
        } catch (BufferAccessException refused) {
            refuse(ErrorCode.of(refused.reason()).wire(), refused.getMessage());
        } catch (IllegalStateException | WrongThreadException memoryGone) {
            if (dataPreamble.position() != 0) {
                // Part of the reply is out: the stream cannot carry an error any more.
                throw new TcpProtocolException(unusable(bufferId, memoryGone) + " (in the middle of a reply)");
            }
            refuse(ErrorCode.OWNER_MEMORY_CLOSED.wire(), unusable(bufferId, memoryGone));
        } finally {
            gather[1] = null;
        }
    }

    static String unusable(long bufferId, RuntimeException e) {
        if (e instanceof WrongThreadException) {
            return "buffer " + bufferId + ": its memory is confined to one thread of the owner; register segments "
                    + "of shared or global arenas";
        }
        return "buffer " + bufferId + ": its memory was closed by its owner (" + e.getMessage() + ")";
    }

    /**
     * Looks up and range-checks (incarnation, key, range); throws the refusal to send back.
     *
     * <p>A request for the buffer of the last request this connection was allowed, with the same
     * id, key and incarnation (compared in constant time: no early exit on the first differing
     * byte), and a range inside it, is allowed without a lookup: a pipelined batch of small ops
     * to one buffer pays one lookup, not one per op (the lookup's two constant-time 16-byte
     * comparisons and its map lookup were the largest share of an 8-byte op's time on the owner).
     * That answer is the lookup's: the incarnation and a registration's id, key and size never
     * change, and ids are never reused; a buffer released since is refused by its pin, which every
     * request takes ({@link LocalBuffer#pin()} refuses once the release began, before the owner's
     * release returns), with the lookup's own refusal. Anything else goes to the lookup.
     */
    private LocalBuffer checkedBuffer(long bufferId, long offset, long length) {
        LocalBuffer b = allowed;
        if (b != null && bufferId == allowedId
                && ((key0 ^ allowedKey0) | (key1 ^ allowedKey1) | (incarnation0 ^ allowedIncarnation0)
                | (incarnation1 ^ allowedIncarnation1)) == 0
                && length >= 1 && TcpProtocol.inRange(offset, length, b.byteSize())) {
            return b;
        }
        TcpProtocol.putLongs(key, key0, key1);
        TcpProtocol.putLongs(incarnation, incarnation0, incarnation1);
        b = registrations.lookup(incarnation, bufferId, key, offset, length);
        allowed = b;
        allowedId = bufferId;
        allowedKey0 = key0;
        allowedKey1 = key1;
        allowedIncarnation0 = incarnation0;
        allowedIncarnation1 = incarnation1;
        return b;
    }

    /** Forgets the last allowed buffer: its pin was refused (released, or its memory closed). */
    private void forgetAllowed() {
        allowed = null;
    }

    /** Queues an ERROR reply (it leaves with the other gathered replies). Error path only: allocates. */
    private void refuse(int code, String text) throws IOException {
        ByteBuffer frame = TcpProtocol.errorFrame(code, text);
        room(frame.remaining()).put(frame);
    }

    /** Consumes a refused WRITE's payload (first what is buffered) so that the next request starts on a frame boundary. */
    private void drain(long bytes) throws IOException {
        long left = bytes;
        while (left > 0) {
            if (!in.hasRemaining() && !fill()) {
                throw new EOFException("connection closed in the payload of a refused WRITE");
            }
            int take = (int) Math.min(left, in.remaining());
            in.position(in.position() + take);
            left -= take;
        }
    }

    /** Answers BAD_REQUEST (best effort, after the replies gathered before it) and ends the session. */
    private void malformed(String why) throws IOException {
        try {
            refuse(ErrorCode.BAD_REQUEST.wire(), "malformed frame: " + why);
            flush();
        } catch (IOException ignored) {
            // the peer may already be gone; the connection closes anyway
        }
        throw new TcpProtocolException("malformed frame: " + why);
    }
}
