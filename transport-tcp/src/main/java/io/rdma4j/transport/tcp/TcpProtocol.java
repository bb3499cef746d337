package io.rdma4j.transport.tcp;

import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.TransportException;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The TCP data protocol, version 2. Requests on a connection are answered in order, one reply
 * each; a requester may send several before it reads their replies (pipelining: a batch of small
 * ops travels as one round of requests and one of replies).
 *
 * <pre>
 * every frame  : u16 magic 0x5254 ("RT") | u8 version (2) | u8 type | u32 body length | body
 * WRITE  (0x01): i64 buffer id | 16-byte access key | 16-byte owner incarnation | i64 offset | i64 length
 *                | length payload bytes
 * READ   (0x02): i64 buffer id | 16-byte access key | 16-byte owner incarnation | i64 offset | i64 length
 * OK     (0x11): (empty body)                         reply to WRITE
 * DATA   (0x12): body length payload bytes            reply to READ, exactly the length asked
 * ERROR  (0x13): u8 code | u16 text length | UTF-8 text (at most 4096 bytes)
 *
 * ERROR codes: those of io.rdma4j.spi.ErrorCode. 1 access denied (unknown, released or wrong key,
 *              never told apart), 2 stale token, 3 range outside the buffer, 4 owner memory unusable,
 *              8 WRITE into a read-only buffer -> connection stays usable; 5 malformed request -> server closes it
 * </pre>
 *
 * Big-endian throughout. A request body is 56 bytes plus, for WRITE, the payload, so the body
 * length of a WRITE must be {@code 56 + length} and that of a READ exactly 56; a chunk is at most
 * {@link #MAX_CHUNK_BYTES}. A frame breaking any of these rules is malformed: the server answers
 * ERROR {@link #BAD_REQUEST} when it can and closes that connection. A request the server refuses
 * (unknown or released buffer, wrong key, range outside the buffer, a WRITE into a buffer its owner
 * registered read-only, whatever the requester's token claims) gets ERROR with the reason and
 * leaves the connection usable: the server first consumes a refused WRITE's payload.
 */
final class TcpProtocol {

    private TcpProtocol() {
    }

    static final int MAGIC = 0x5254;
    static final int VERSION = 2;

    static final int WRITE = 0x01;
    static final int READ = 0x02;
    static final int OK = 0x11;
    static final int DATA = 0x12;
    static final int ERROR = 0x13;

    /** Magic, version, type, body length. */
    static final int PREAMBLE_BYTES = 8;
    /** Buffer id, access key, offset, length. */
    static final int REQUEST_FIXED_BYTES = 56;
    static final int REQUEST_HEADER_BYTES = PREAMBLE_BYTES + REQUEST_FIXED_BYTES;
    static final int KEY_BYTES = 16;

    static final int MAX_CHUNK_MIB = 1024;
    /** Largest payload of one request or reply: 1 GiB, the largest chunk setting. */
    static final int MAX_CHUNK_BYTES = MAX_CHUNK_MIB << 20;
    static final int MAX_ERROR_TEXT_BYTES = 4096;

    /**
     * Bytes of each of a server session's two buffers: the requests it has read and not yet
     * served, and the small replies it gathered and not yet written. A requester pipelining a
     * batch keeps each round's requests and expected replies within this, so that neither side
     * can block writing while the other does too.
     */
    static final int SESSION_BUFFER_BYTES = 32 << 10;
    /** Largest READ whose DATA reply the server gathers with other replies instead of writing it on its own. */
    static final int INLINE_REPLY_BYTES = 8 << 10;

    /** Bytes of an owner incarnation in a request. */
    static final int INCARNATION_BYTES = RegistrationLookup.INCARNATION_BYTES;

    /** Where each field of a request header starts. */
    static final int ID_AT = 8;
    static final int KEY_AT = 16;
    static final int INCARNATION_AT = 32;
    static final int OFFSET_AT = 48;
    static final int LENGTH_AT = 56;

    /** ERROR code of a refusal that leaves the connection usable (the request was well formed). */
    static boolean isAccessRefusal(int code) {
        return code != ErrorCode.BAD_REQUEST.wire() && ErrorCode.fromWire(code).kind() != TransportException.Kind.REMOTE_FAILURE;
    }

    static String typeName(int type) {
        return switch (type) {
            case WRITE -> "WRITE";
            case READ -> "READ";
            case OK -> "OK";
            case DATA -> "DATA";
            case ERROR -> "ERROR";
            default -> "0x" + Integer.toHexString(type);
        };
    }

    /** Puts a preamble at the buffer's position. */
    static void putPreamble(ByteBuffer b, int type, int bodyLength) {
        b.putShort((short) MAGIC).put((byte) VERSION).put((byte) type).putInt(bodyLength);
    }

    // ------------------------------------------------------------------ decoders
    // Total and allocation-free on the good path: each returns or throws TcpProtocolException.

    /**
     * Checks a request preamble: the first {@link #PREAMBLE_BYTES} of {@code header}, read at
     * absolute positions.
     *
     * @return the body length, between {@link #REQUEST_FIXED_BYTES} and that plus {@link #MAX_CHUNK_BYTES}
     * @throws TcpProtocolException saying what is malformed: magic, version, type or body length
     */
    static long requestBodyLength(ByteBuffer header) throws TcpProtocolException {
        return requestBodyLength(header, 0);
    }

    /** {@link #requestBodyLength(ByteBuffer)} of the header that starts at absolute position {@code at}. */
    static long requestBodyLength(ByteBuffer header, int at) throws TcpProtocolException {
        int magic = header.getShort(at) & 0xffff;
        int version = header.get(at + 2) & 0xff;
        int type = header.get(at + 3) & 0xff;
        long bodyLength = header.getInt(at + 4) & 0xffffffffL;
        if (magic != MAGIC) {
            throw new TcpProtocolException("bad magic 0x" + Integer.toHexString(magic));
        }
        if (version != VERSION) {
            throw new TcpProtocolException("unsupported protocol version " + version + " (this side speaks " + VERSION + ")");
        }
        if (type != WRITE && type != READ) {
            throw new TcpProtocolException("unknown request type " + typeName(type));
        }
        long maxBody = REQUEST_FIXED_BYTES + (long) MAX_CHUNK_BYTES;
        if (bodyLength < REQUEST_FIXED_BYTES || bodyLength > maxBody) {
            throw new TcpProtocolException("request body of " + bodyLength + " bytes (allowed: " + REQUEST_FIXED_BYTES
                    + ".." + maxBody + ")");
        }
        return bodyLength;
    }

    /**
     * Checks a whole request header, {@link #REQUEST_HEADER_BYTES} at absolute positions: its
     * preamble, and its length field against the body length and the chunk cap. Offsets and
     * ranges are the owner's to refuse, not malformed.
     *
     * @return the payload length of a WRITE, or the length a READ asks for: 0..{@link #MAX_CHUNK_BYTES}
     * @throws TcpProtocolException saying what is malformed
     */
    static int requestLength(ByteBuffer header) throws TcpProtocolException {
        return requestLength(header, 0);
    }

    /** {@link #requestLength(ByteBuffer)} of the header that starts at absolute position {@code at}. */
    static int requestLength(ByteBuffer header, int at) throws TcpProtocolException {
        long bodyLength = requestBodyLength(header, at);
        long length = header.getLong(at + LENGTH_AT);
        if (header.get(at + 3) == WRITE) {
            if (length != bodyLength - REQUEST_FIXED_BYTES) {
                throw new TcpProtocolException("WRITE announces " + length + " payload bytes in a " + bodyLength + "-byte body");
            }
        } else {
            if (bodyLength != REQUEST_FIXED_BYTES) {
                throw new TcpProtocolException("READ with a " + bodyLength + "-byte body (must be " + REQUEST_FIXED_BYTES + ")");
            }
            if (length < 0 || length > MAX_CHUNK_BYTES) {
                throw new TcpProtocolException("READ of " + length + " bytes (allowed: 0.." + MAX_CHUNK_BYTES + ")");
            }
        }
        return (int) length;
    }

    /**
     * Checks a reply preamble, {@link #PREAMBLE_BYTES} at absolute positions, to a request that
     * expects an {@code expected} reply (OK or DATA); an ERROR reply is always allowed.
     *
     * @return the body length: 0 for OK, up to {@link #MAX_CHUNK_BYTES} for DATA, 3 to 3 +
     *         {@link #MAX_ERROR_TEXT_BYTES} for ERROR
     * @throws TcpProtocolException when the other side is not speaking this protocol, or replies
     *                              with another type or an impossible length
     */
    static int replyBodyLength(ByteBuffer preamble, int expected) throws TcpProtocolException {
        int magic = preamble.getShort(0) & 0xffff;
        int version = preamble.get(2) & 0xff;
        int type = preamble.get(3) & 0xff;
        long bodyLength = preamble.getInt(4) & 0xffffffffL;
        if (magic != MAGIC || version != VERSION) {
            throw new TcpProtocolException("not a TCP data endpoint of this protocol (magic 0x"
                    + Integer.toHexString(magic) + ", version " + version + ")");
        }
        if (type == ERROR) {
            if (bodyLength < 3 || bodyLength > 3 + MAX_ERROR_TEXT_BYTES) {
                throw new TcpProtocolException("ERROR reply has a malformed " + bodyLength + "-byte body");
            }
        } else if (type != expected) {
            throw new TcpProtocolException("expected a " + typeName(expected) + " reply, got " + typeName(type));
        } else if (type == OK && bodyLength != 0) {
            throw new TcpProtocolException("OK reply to a WRITE has a " + bodyLength + "-byte body");
        } else if (bodyLength > MAX_CHUNK_BYTES) {
            throw new TcpProtocolException("reply body of " + bodyLength + " bytes exceeds the " + MAX_CHUNK_BYTES + "-byte cap");
        }
        return (int) bodyLength;
    }

    /**
     * Decodes an ERROR reply's body (all of {@code body}'s remaining bytes, as
     * {@link #replyBodyLength} allowed).
     *
     * @return the refusal, with whatever code the owner sent
     * @throws TcpProtocolException when the text length does not match the body
     */
    static TcpRefusedException decodeError(ByteBuffer body) throws TcpProtocolException {
        if (body.remaining() < 3) {
            throw new TcpProtocolException("ERROR reply has a malformed " + body.remaining() + "-byte body");
        }
        int code = body.get() & 0xff;
        int textLength = body.getShort() & 0xffff;
        if (textLength != body.remaining()) {
            throw new TcpProtocolException("ERROR reply announces " + textLength + " bytes of text, carries " + body.remaining());
        }
        return new TcpRefusedException(code, StandardCharsets.UTF_8.decode(body).toString());
    }

    /** Puts {@code first} then {@code second} big-endian into the 16 bytes of {@code to}, as they came off the wire. */
    static void putLongs(byte[] to, long first, long second) {
        LONGS.set(to, 0, first);
        LONGS.set(to, 8, second);
    }

    private static final java.lang.invoke.VarHandle LONGS =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(long[].class, java.nio.ByteOrder.BIG_ENDIAN);

    /** Whether {@code [offset, offset + length)} lies inside {@code [0, size)}, without overflow. */
    static boolean inRange(long offset, long length, long size) {
        return offset >= 0 && length >= 0 && offset <= size && length <= size - offset;
    }

    /** An ERROR frame, text cut to {@link #MAX_ERROR_TEXT_BYTES}. Error path only: allocates. */
    static ByteBuffer errorFrame(int code, String text) {
        byte[] t = text.getBytes(StandardCharsets.UTF_8);
        if (t.length > MAX_ERROR_TEXT_BYTES) {
            String cut = text;
            while (t.length > MAX_ERROR_TEXT_BYTES) {
                cut = cut.substring(0, cut.length() - Math.max(1, (t.length - MAX_ERROR_TEXT_BYTES) / 4));
                t = cut.getBytes(StandardCharsets.UTF_8);
            }
        }
        ByteBuffer b = ByteBuffer.allocate(PREAMBLE_BYTES + 3 + t.length);
        putPreamble(b, ERROR, 3 + t.length);
        b.put((byte) code).putShort((short) t.length).put(t);
        return b.flip();
    }

    /**
     * Most bytes one {@code write} system call is given. A larger call keeps the kernel in one
     * send loop holding the socket lock, and on loopback the receiver's acknowledgements then wait
     * in the backlog: one 64 MiB call moved 2.6 GB/s where 1 MiB calls moved 3.1 to 3.7 GB/s
     * ({@code TcpTransferBenchmark}, see benchmarks/README.md).
     */
    static final int WRITE_SLICE = 1 << 20;
    /** Most bytes one {@code read} system call is given, for the same reason on the receiving side. */
    static final int READ_SLICE = 256 << 10;

    /**
     * Fills {@code dst} completely, at most {@link #READ_SLICE} bytes per system call.
     *
     * @throws EOFException when the peer closes the stream first
     */
    static void readFully(ReadableByteChannel ch, ByteBuffer dst) throws IOException {
        int limit = dst.limit();
        try {
            while (dst.position() < limit) {
                dst.limit(dst.position() + Math.min(READ_SLICE, limit - dst.position()));
                if (ch.read(dst) < 0) {
                    throw new EOFException("connection closed by peer");
                }
            }
        } finally {
            dst.limit(limit);
        }
    }

    /** Writes {@code src} completely, at most {@link #WRITE_SLICE} bytes per system call. */
    static void writeFully(SocketChannel ch, ByteBuffer src) throws IOException {
        int limit = src.limit();
        try {
            while (src.position() < limit) {
                src.limit(src.position() + Math.min(WRITE_SLICE, limit - src.position()));
                ch.write(src);
            }
        } finally {
            src.limit(limit);
        }
    }

    /**
     * Writes every buffer completely (a gathering write: a header and its payload leave in one
     * system call), at most {@link #WRITE_SLICE} bytes of the last buffer per call.
     */
    static void writeFully(SocketChannel ch, ByteBuffer[] srcs) throws IOException {
        ByteBuffer last = srcs[srcs.length - 1];
        int limit = last.limit();
        try {
            while (anyRemaining(srcs) || last.position() < limit) {
                last.limit(last.position() + Math.min(WRITE_SLICE, limit - last.position()));
                ch.write(srcs);
            }
        } finally {
            last.limit(limit);
        }
    }

    private static boolean anyRemaining(ByteBuffer[] buffers) {
        for (ByteBuffer b : buffers) {
            if (b.hasRemaining()) {
                return true;
            }
        }
        return false;
    }
}
