package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Endpoint;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The control protocol's framing and bodies: {@code u32 length | u8 type | body}, big-endian,
 * where {@code length} counts the type byte and the body and may not exceed
 * {@link #MAX_FRAME_BYTES}. One request and its reply at a time per connection.
 *
 * <pre>
 *   request  READINESS  (empty)                         reply OK: u8 state | str detail
 *   request  RELEASE    16-byte incarnation | i64 id | 16-byte key
 *                                                       reply OK: (empty)
 *   request  TRANSPORT    str name | str host | u16 port | payload (rest)
 *                                                       reply OK: payload (rest)
 *   any reply ERROR     u8 code | str message           code: io.rdma4j.spi.ErrorCode
 *   str = u16 length | UTF-8 bytes
 * </pre>
 *
 * <p>Every decoder here is strict and total: it returns a value or throws
 * {@link ProtocolException}, and allocates nothing sized by a length it has not checked: a frame
 * body grows with the bytes that actually arrive, up to the checked length.
 */
final class Frames {

    static final int MAX_FRAME_BYTES = io.rdma4j.spi.ControlChannel.MAX_PAYLOAD_BYTES + 4096;
    /** A frame body's first allocation; it doubles as bytes arrive. */
    private static final int INITIAL_BODY_BYTES = 4096;
    static final int KEY_BYTES = 16;

    static final byte READINESS = 1;
    static final byte RELEASE = 2;
    static final byte TRANSPORT = 3;
    static final byte OK = (byte) 0x80;
    static final byte ERROR = (byte) 0x81;

    /** Bytes of an owner incarnation in a request. */
    static final int INCARNATION_BYTES = 16;
    /** Bytes of a RELEASE request body. */
    static final int RELEASE_BYTES = INCARNATION_BYTES + 8 + KEY_BYTES;

    private Frames() {
    }

    /** A received frame. */
    record Frame(byte type, ByteBuffer body) {
    }

    /** A RELEASE request. */
    record Release(byte[] incarnation, long bufferId, byte[] accessKey) {
    }

    /** A TRANSPORT request: a transport's payload and who sent it. */
    record TransportRequest(String transport, Endpoint from, byte[] payload) {
    }

    /** An ERROR reply. */
    record Error(byte code, String message) {
    }

    /** Thrown for a frame that breaks the protocol; the connection is closed. */
    static final class ProtocolException extends IOException {
        private static final long serialVersionUID = 1L;

        ProtocolException(String message) {
            super(message);
        }
    }

    /**
     * Reads one frame.
     *
     * @return the frame, or {@code null} on a clean end of stream before its first byte
     * @throws ProtocolException for a length out of bounds or a stream that ends inside the frame
     * @throws IOException       when reading fails
     */
    static Frame read(InputStream in) throws IOException {
        int first = in.read();
        return first < 0 ? null : readRest(first, in);
    }

    /**
     * Reads the rest of a frame whose first byte was {@code first}.
     *
     * @throws ProtocolException for a length out of bounds or a stream that ends inside the frame
     * @throws IOException       when reading fails
     */
    static Frame readRest(int first, InputStream in) throws IOException {
        int length = first << 24;
        for (int shift = 16; shift >= 0; shift -= 8) {
            length |= readByte(in, "length") << shift;
        }
        if (length < 1 || length > MAX_FRAME_BYTES) {
            throw new ProtocolException("control frame length " + Integer.toUnsignedString(length)
                    + " outside [1, " + MAX_FRAME_BYTES + "]");
        }
        byte type = (byte) readByte(in, "type");
        int bodyLength = length - 1;
        byte[] body = new byte[Math.min(bodyLength, INITIAL_BODY_BYTES)];
        int filled = 0;
        while (filled < bodyLength) {
            if (filled == body.length) {
                body = Arrays.copyOf(body, (int) Math.min(bodyLength, 2L * body.length));
            }
            int n = in.read(body, filled, body.length - filled);
            if (n < 0) {
                throw new ProtocolException("control frame truncated: " + filled + " of " + bodyLength + " body bytes");
            }
            filled += n;
        }
        return new Frame(type, ByteBuffer.wrap(body));
    }

    private static int readByte(InputStream in, String what) throws IOException {
        int b = in.read();
        if (b < 0) {
            throw new ProtocolException("control frame truncated in its " + what);
        }
        return b;
    }

    /** The encoded frame. */
    static byte[] encode(byte type, byte[] body) throws IOException {
        if (body.length + 1 > MAX_FRAME_BYTES) {
            throw new IOException("control frame of " + (body.length + 1) + " bytes exceeds " + MAX_FRAME_BYTES);
        }
        return ByteBuffer.allocate(5 + body.length).putInt(body.length + 1).put(type).put(body).array();
    }

    static void write(OutputStream out, byte type, byte[] body) throws IOException {
        out.write(encode(type, body));
        out.flush();
    }

    // ------------------------------------------------------------------ bodies

    static byte[] release(byte[] incarnation, long bufferId, byte[] accessKey) {
        return ByteBuffer.allocate(RELEASE_BYTES).put(incarnation, 0, INCARNATION_BYTES).putLong(bufferId)
                .put(accessKey, 0, KEY_BYTES).array();
    }

    static Release parseRelease(ByteBuffer body) throws ProtocolException {
        if (body.remaining() != RELEASE_BYTES) {
            throw new ProtocolException("release request of " + body.remaining() + " bytes, expected " + RELEASE_BYTES);
        }
        byte[] incarnation = new byte[INCARNATION_BYTES];
        body.get(incarnation);
        long id = body.getLong();
        byte[] key = new byte[KEY_BYTES];
        body.get(key);
        return new Release(incarnation, id, key);
    }

    static byte[] transportRequest(String transport, Endpoint from, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(stringSize(transport) + stringSize(from.host()) + 2 + payload.length);
        putString(b, transport);
        putString(b, from.host());
        return b.putShort((short) from.port()).put(payload).array();
    }

    static TransportRequest parseTransportRequest(ByteBuffer body) throws ProtocolException {
        String name = getString(body);
        String host = getString(body);
        if (body.remaining() < 2) {
            throw new ProtocolException("truncated transport request: no requester port");
        }
        int port = Short.toUnsignedInt(body.getShort());
        Endpoint from;
        try {
            from = new Endpoint(host, port);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("bad requester endpoint: " + e.getMessage());
        }
        return new TransportRequest(name, from, rest(body));
    }

    static byte[] readiness(PeerReadiness.State state, String detail) {
        ByteBuffer b = ByteBuffer.allocate(1 + stringSize(detail));
        b.put((byte) state.ordinal());
        putString(b, detail);
        return b.array();
    }

    /** A readiness reply: READY, STARTING or FAILED with its detail; {@code peer} is the one asked. */
    static PeerReadiness parseReadiness(Endpoint peer, ByteBuffer body) throws ProtocolException {
        if (!body.hasRemaining()) {
            throw new ProtocolException("empty readiness reply");
        }
        int state = Byte.toUnsignedInt(body.get());
        PeerReadiness.State[] states = PeerReadiness.State.values();
        if (state >= states.length || state == PeerReadiness.State.UNREACHABLE.ordinal()) {
            throw new ProtocolException("readiness reply with unknown state " + state);
        }
        String detail = getString(body);
        if (body.hasRemaining()) {
            throw new ProtocolException("readiness reply with " + body.remaining() + " trailing bytes");
        }
        return new PeerReadiness(peer, states[state], detail);
    }

    static byte[] error(byte code, String message) {
        ByteBuffer b = ByteBuffer.allocate(1 + stringSize(message));
        b.put(code);
        putString(b, message);
        return b.array();
    }

    static Error parseError(ByteBuffer body) throws ProtocolException {
        if (!body.hasRemaining()) {
            throw new ProtocolException("empty error reply");
        }
        byte code = body.get();
        String message = getString(body);
        if (body.hasRemaining()) {
            throw new ProtocolException("error reply with " + body.remaining() + " trailing bytes");
        }
        return new Error(code, message);
    }

    // ------------------------------------------------------------------ strings

    static void putString(ByteBuffer b, String s) {
        byte[] raw = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(raw.length, 0xffff);
        b.putShort((short) n).put(raw, 0, n);
    }

    static int stringSize(String s) {
        return 2 + Math.min(s.getBytes(StandardCharsets.UTF_8).length, 0xffff);
    }

    static String getString(ByteBuffer b) throws ProtocolException {
        if (b.remaining() < 2) {
            throw new ProtocolException("truncated string length");
        }
        int n = Short.toUnsignedInt(b.getShort());
        if (b.remaining() < n) {
            throw new ProtocolException("truncated string: " + n + " bytes announced, " + b.remaining() + " left");
        }
        byte[] raw = new byte[n];
        b.get(raw);
        return new String(raw, StandardCharsets.UTF_8);
    }

    static byte[] rest(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
