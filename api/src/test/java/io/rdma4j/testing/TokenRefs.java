package io.rdma4j.testing;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * What a transport sees of a token ({@link RemoteBufferRef}), for tests that drive a
 * {@link io.rdma4j.spi.Transport} directly: the manager builds it internally and does not publish
 * it. Read here from the token's wire form as documented on {@link RdmaRemoteBuffer} (version 2);
 * {@code RdmaRemoteBufferTest} checks that it equals the manager's own.
 */
public final class TokenRefs {

    private TokenRefs() {
    }

    /**
     * The reference the manager would hand {@code transport} for {@code token}.
     *
     * @param token     a token made by a manager (not validated again here)
     * @param transport the transport's name
     * @return the owner, incarnation, id, size and access key of {@code token}, and its context for {@code transport}
     * @throws IllegalArgumentException if the token carries no context for {@code transport}
     */
    public static RemoteBufferRef refFor(RdmaRemoteBuffer token, String transport) {
        ByteBuffer b = ByteBuffer.wrap(token.toBytes());
        b.position(4 + 1 + 1);                          // magic, version, flags
        byte[] incarnation = bytes(b, 16);
        long id = b.getLong();
        b.getLong();                                    // the slice's offset: ops carry it, not the reference
        long size = b.getLong();
        byte[] key = bytes(b, 16);
        String host = new String(bytes(b, b.get() & 0xff), StandardCharsets.UTF_8);
        int port = b.getShort() & 0xffff;
        int contexts = b.get() & 0xff;
        for (int i = 0; i < contexts; i++) {
            String name = new String(bytes(b, b.get() & 0xff), StandardCharsets.US_ASCII);
            byte[] context = bytes(b, b.getShort() & 0xffff);
            if (name.equals(transport)) {
                return new RemoteBufferRef(new Endpoint(host, port), HexFormat.of().formatHex(incarnation), id, size, key,
                        context);
            }
        }
        throw new IllegalArgumentException("token carries no context for transport " + transport + ": " + token);
    }

    private static byte[] bytes(ByteBuffer b, int n) {
        byte[] out = new byte[n];
        b.get(out);
        return out;
    }
}
