package io.rdma4j.internal.control;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The control protocol's framing: {@code u32 length | u8 type | body}, big-endian, where
 * {@code length} counts the type byte and the body and may not exceed {@link #MAX_FRAME_BYTES}.
 * One request and its reply at a time per connection.
 *
 * <pre>
 *   request  READINESS  (empty)                         reply OK: u8 state | str detail
 *   request  RELEASE    i64 id | 16-byte key            reply OK: (empty)
 *   request  BACKEND    str name | str host | u16 port | payload (rest)
 *                                                       reply OK: payload (rest)
 *   any reply ERROR     u8 code | str message           code: 1 access denied, 2 failed, 3 bad request
 *   str = u16 length | UTF-8 bytes
 * </pre>
 */
final class Frames {

    static final int MAX_FRAME_BYTES = io.rdma4j.spi.ControlChannel.MAX_PAYLOAD_BYTES + 4096;

    static final byte READINESS = 1;
    static final byte RELEASE = 2;
    static final byte BACKEND = 3;
    static final byte OK = (byte) 0x80;
    static final byte ERROR = (byte) 0x81;

    static final byte ERR_ACCESS_DENIED = 1;
    static final byte ERR_FAILED = 2;
    static final byte ERR_BAD_REQUEST = 3;

    private Frames() {
    }

    /** A received frame. */
    record Frame(byte type, ByteBuffer body) {
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
     */
    static Frame read(DataInputStream in) throws IOException {
        int first = in.read();
        if (first < 0) {
            return null;
        }
        int length = (first << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (length < 1 || length > MAX_FRAME_BYTES) {
            throw new ProtocolException("control frame length " + Integer.toUnsignedString(length)
                    + " outside [1, " + MAX_FRAME_BYTES + "]");
        }
        byte type = in.readByte();
        byte[] body = new byte[length - 1];
        try {
            in.readFully(body);
        } catch (EOFException e) {
            throw new ProtocolException("control frame truncated: expected " + (length - 1) + " body bytes");
        }
        return new Frame(type, ByteBuffer.wrap(body));
    }

    static void write(DataOutputStream out, byte type, byte[] body) throws IOException {
        if (body.length + 1 > MAX_FRAME_BYTES) {
            throw new IOException("control frame of " + (body.length + 1) + " bytes exceeds " + MAX_FRAME_BYTES);
        }
        out.writeInt(body.length + 1);
        out.writeByte(type);
        out.write(body);
        out.flush();
    }

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

    static byte[] error(byte code, String message) {
        ByteBuffer b = ByteBuffer.allocate(1 + stringSize(message));
        b.put(code);
        putString(b, message);
        return b.array();
    }

    static byte[] rest(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }
}
