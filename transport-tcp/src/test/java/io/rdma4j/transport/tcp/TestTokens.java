package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.testing.TokenRefs;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Crafting tokens, following the layout documented on {@link RdmaRemoteBuffer}: magic (4),
 * version (1), flags (1), incarnation (16), id (8), offset (8), length (8), access key (16), host
 * length (1), host, port (2), context count (1), then per context: name length (1), name, length
 * (2), bytes; last a CRC32C (4) of everything before it.
 */
final class TestTokens {

    /** Offset of the access key in the encoded token. */
    static final int KEY_OFFSET = 4 + 1 + 1 + 16 + 8 + 8 + 8;

    private TestTokens() {
    }

    /** The same token with one access-key byte changed. */
    static RdmaRemoteBuffer withFlippedKeyByte(RdmaRemoteBuffer token) {
        byte[] raw = token.toBytes();
        raw[KEY_OFFSET + 3] ^= 0x5a;
        return RdmaRemoteBuffer.fromBytes(resealed(raw));
    }

    /** The data endpoint the token's tcp context names. */
    static Endpoint dataEndpoint(RdmaRemoteBuffer token) {
        return TcpContextCodec.decode(TokenRefs.refFor(token, "tcp").context());
    }

    /** The owner incarnation the token names, as requests carry it. */
    static byte[] incarnation(RdmaRemoteBuffer token) {
        return java.util.HexFormat.of().parseHex(token.ownerIncarnation());
    }

    /** The token's access key. */
    static byte[] accessKey(RdmaRemoteBuffer token) {
        return TokenRefs.refFor(token, "tcp").accessKey();
    }

    /** The same token, its tcp context replaced by {@code context}. */
    static RdmaRemoteBuffer withTcpContext(RdmaRemoteBuffer token, byte[] context) {
        ByteBuffer in = ByteBuffer.wrap(token.toBytes());
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int fixed = KEY_OFFSET + 16;
        int hostLength = in.get(fixed) & 0xff;
        int contextsAt = fixed + 1 + hostLength + 2;
        out.write(in.array(), 0, contextsAt + 1);
        int count = in.get(contextsAt) & 0xff;
        in.position(contextsAt + 1);
        for (int i = 0; i < count; i++) {
            byte[] name = new byte[in.get() & 0xff];
            in.get(name);
            byte[] ctx = new byte[in.getShort() & 0xffff];
            in.get(ctx);
            if (new String(name, StandardCharsets.US_ASCII).equals("tcp")) {
                ctx = context;
            }
            out.write(name.length);
            out.writeBytes(name);
            out.write(ctx.length >>> 8);
            out.write(ctx.length & 0xff);
            out.writeBytes(ctx);
        }
        out.writeBytes(new byte[4]); // the checksum, written next
        return RdmaRemoteBuffer.fromBytes(resealed(out.toByteArray()));
    }

    /** Rewrites the trailing checksum of an edited encoding. */
    private static byte[] resealed(byte[] raw) {
        CRC32C crc = new CRC32C();
        crc.update(raw, 0, raw.length - 4);
        ByteBuffer.wrap(raw).putInt(raw.length - 4, (int) crc.getValue());
        return raw;
    }

    /** The same token, pointing its tcp context at {@code dataEndpoint}. */
    static RdmaRemoteBuffer pointingAt(RdmaRemoteBuffer token, Endpoint dataEndpoint) {
        return withTcpContext(token, TcpContextCodec.encode(dataEndpoint));
    }
}
