package io.rdma4j;

import io.rdma4j.spi.Endpoint;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.zip.CRC32C;

import static io.rdma4j.RdmaRemoteBuffer.KEY_BYTES;
import static io.rdma4j.RdmaRemoteBuffer.MAX_CONTEXTS;
import static io.rdma4j.RdmaRemoteBuffer.MAX_CONTEXT_BYTES;
import static io.rdma4j.RdmaRemoteBuffer.MAX_ENCODED_BYTES;
import static io.rdma4j.RdmaRemoteBuffer.NAME;
import static io.rdma4j.RdmaRemoteBuffer.VERSION;

/**
 * The wire form of an {@link RdmaRemoteBuffer}: what {@link RdmaRemoteBuffer#toBytes()} writes and
 * {@link RdmaRemoteBuffer#fromBytes(byte[])} reads, in the format documented on
 * {@link RdmaRemoteBuffer} (a public contract: tokens cross processes and versions). Stateless.
 */
final class TokenCodec {

    private static final byte[] MAGIC = {'R', 'D', 'M', 'B'};
    private static final int CHECKSUM_BYTES = 4;
    private static final HexFormat HEX = HexFormat.of();

    private TokenCodec() {
    }

    /** The wire form of {@code t}; a new array, the caller's. */
    static byte[] encode(RdmaRemoteBuffer t) {
        byte[] host = t.owner().host().getBytes(StandardCharsets.UTF_8);
        int len = 4 + 1 + 1 + KEY_BYTES + 8 + 8 + 8 + KEY_BYTES + 1 + host.length + 2 + 1 + CHECKSUM_BYTES;
        for (var e : t.contexts().entrySet()) {
            len += 1 + e.getKey().length() + 2 + e.getValue().length;
        }
        ByteBuffer b = ByteBuffer.allocate(len);
        b.put(MAGIC).put((byte) VERSION).put((byte) (t.isReadOnly() ? RdmaRemoteBuffer.FLAG_READ_ONLY : 0)).put(t.incarnationBytes()).putLong(t.id()).putLong(t.offset()).putLong(t.size())
                .put(t.accessKey());
        b.put((byte) host.length).put(host).putShort((short) t.owner().port());
        b.put((byte) t.contexts().size());
        for (var e : t.contexts().entrySet()) {
            b.put((byte) e.getKey().length()).put(e.getKey().getBytes(StandardCharsets.US_ASCII));
            b.putShort((short) e.getValue().length).put(e.getValue());
        }
        b.putInt(checksum(b.array(), len - CHECKSUM_BYTES));
        return b.array();
    }

    /** Reads a token; see {@link RdmaRemoteBuffer#fromBytes(byte[])} for what is refused, and how. */
    static RdmaRemoteBuffer decode(byte[] bytes) {
        if (bytes == null) {
            throw new IllegalArgumentException("malformed RDMA buffer token: null");
        }
        if (bytes.length > MAX_ENCODED_BYTES) {
            throw new IllegalArgumentException("malformed RDMA buffer token: " + bytes.length
                    + " bytes, more than the " + MAX_ENCODED_BYTES + " allowed");
        }
        Reader r = new Reader(bytes);
        byte[] magic = r.bytes(4, "magic");
        if (!Arrays.equals(magic, MAGIC)) {
            throw r.fail(0, "bad magic " + HEX.formatHex(magic) + " (not an RDMA buffer token)");
        }
        int version = r.u8("version");
        if (version != VERSION) {
            throw r.fail(4, "unsupported version " + version + " (this library reads version " + VERSION
                    + (version < VERSION ? "; the token was made by an older rdma4j)" : "; the token was made by a newer rdma4j)"));
        }
        if (bytes.length < r.pos + CHECKSUM_BYTES) {
            throw r.fail(r.pos, "truncated: checksum needs " + CHECKSUM_BYTES + " byte(s), " + (bytes.length - r.pos) + " left");
        }
        int end = bytes.length - CHECKSUM_BYTES;
        int stored = ByteBuffer.wrap(bytes, end, CHECKSUM_BYTES).getInt();
        int computed = checksum(bytes, end);
        if (stored != computed) {
            throw r.fail(end, "checksum mismatch (stored " + Integer.toHexString(stored) + ", computed "
                    + Integer.toHexString(computed) + "): the token was corrupted or truncated");
        }
        r.limit(end);
        int flags = r.u8("flags");
        if ((flags & ~RdmaRemoteBuffer.FLAG_READ_ONLY) != 0) {
            throw r.fail(5, "unknown flags 0x" + Integer.toHexString(flags & ~RdmaRemoteBuffer.FLAG_READ_ONLY)
                    + " (this library knows only 0x" + Integer.toHexString(RdmaRemoteBuffer.FLAG_READ_ONLY)
                    + ", read-only; the token was made by a newer rdma4j?)");
        }
        byte[] incarnation = r.bytes(KEY_BYTES, "incarnation");
        long id = r.i64("buffer id");
        if (id < 0) {
            throw r.fail(r.pos - 8, "negative buffer id " + id);
        }
        long offset = r.i64("offset");
        if (offset < 0) {
            throw r.fail(r.pos - 8, "negative offset " + offset);
        }
        long size = r.i64("length");
        if (size < 1) {
            throw r.fail(r.pos - 8, "length must be positive, got " + size);
        }
        if (offset > Long.MAX_VALUE - size) {
            throw r.fail(r.pos - 16, "range [" + offset + ", " + offset + " + " + size + ") overflows");
        }
        byte[] key = r.bytes(KEY_BYTES, "access key");
        int hostLen = r.u8("host length");
        if (hostLen == 0) {
            throw r.fail(r.pos - 1, "empty owner host");
        }
        String host = r.utf8(hostLen, "owner host");
        int port = r.u16("owner port");
        if (port == 0) {
            throw r.fail(r.pos - 2, "owner port 0");
        }
        int count = r.u8("context count");
        if (count > MAX_CONTEXTS) {
            throw r.fail(r.pos - 1, count + " transport contexts, more than " + MAX_CONTEXTS);
        }
        LinkedHashMap<String, byte[]> contexts = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            int at = r.pos;
            int nameLen = r.u8("transport name length");
            String name = new String(r.bytes(nameLen, "transport name"), StandardCharsets.US_ASCII);
            if (!NAME.matcher(name).matches()) {
                throw r.fail(at, "bad transport name '" + name + "'");
            }
            int ctxLen = r.u16("context length");
            if (ctxLen > MAX_CONTEXT_BYTES) {
                throw r.fail(r.pos - 2, "context of " + name + " is " + ctxLen + " bytes, more than " + MAX_CONTEXT_BYTES);
            }
            byte[] ctx = r.bytes(ctxLen, "context of " + name);
            if (contexts.putIfAbsent(name, ctx) != null) {
                throw r.fail(at, "transport " + name + " appears twice");
            }
        }
        if (r.pos != end) {
            throw r.fail(r.pos, (end - r.pos) + " trailing bytes before the checksum");
        }
        return new RdmaRemoteBuffer(incarnation, new Endpoint(host, port), id, offset, size, key, contexts,
                (flags & RdmaRemoteBuffer.FLAG_READ_ONLY) != 0);
    }

    private static int checksum(byte[] bytes, int length) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, length);
        return (int) crc.getValue();
    }

    private static final class Reader {
        private final byte[] bytes;
        private int limit;
        private int pos;

        Reader(byte[] bytes) {
            this.bytes = bytes;
            this.limit = bytes.length;
        }

        /** Fields end at {@code end}: what follows is the checksum. */
        void limit(int end) {
            limit = end;
        }

        byte[] bytes(int n, String what) {
            need(n, what);
            byte[] out = Arrays.copyOfRange(bytes, pos, pos + n);
            pos += n;
            return out;
        }

        int u8(String what) {
            need(1, what);
            return bytes[pos++] & 0xff;
        }

        int u16(String what) {
            need(2, what);
            int v = ((bytes[pos] & 0xff) << 8) | (bytes[pos + 1] & 0xff);
            pos += 2;
            return v;
        }

        long i64(String what) {
            need(8, what);
            long v = ByteBuffer.wrap(bytes, pos, 8).getLong();
            pos += 8;
            return v;
        }

        String utf8(int n, String what) {
            byte[] raw = bytes(n, what);
            try {
                return StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(raw)).toString();
            } catch (CharacterCodingException e) {
                throw fail(pos - n, what + " is not valid UTF-8");
            }
        }

        private void need(int n, String what) {
            if (limit - pos < n) {
                throw fail(pos, "truncated: " + what + " needs " + n + " byte(s), " + (limit - pos) + " left");
            }
        }

        IllegalArgumentException fail(int at, String why) {
            return new IllegalArgumentException("malformed RDMA buffer token at byte " + at + " of "
                    + bytes.length + ": " + why);
        }
    }
}
