package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The context bytes the TCP transport puts into a token: where the owner's data endpoint listens.
 *
 * <p>Version 1, big-endian: {@code u8 version (1)}, {@code u16 port}, {@code u8 host length},
 * host in UTF-8 (1..255 bytes). Nothing may follow. The decoder is strict; any deviation is an
 * {@link IllegalArgumentException} saying what is wrong.
 */
final class TcpContextCodec {

    static final int VERSION = 1;

    private TcpContextCodec() {
    }

    static byte[] encode(Endpoint dataEndpoint) {
        byte[] host = dataEndpoint.host().getBytes(StandardCharsets.UTF_8);
        if (host.length > 255) {
            throw new IllegalArgumentException("data endpoint host is " + host.length + " bytes of UTF-8, more than 255: "
                    + dataEndpoint.host());
        }
        return ByteBuffer.allocate(4 + host.length)
                .put((byte) VERSION).putShort((short) dataEndpoint.port()).put((byte) host.length).put(host)
                .array();
    }

    static Endpoint decode(byte[] context) {
        if (context.length < 1) {
            throw new IllegalArgumentException("tcp context is empty");
        }
        int version = context[0] & 0xff;
        if (version != VERSION) {
            throw new IllegalArgumentException("tcp context version " + version + " is not supported (this side reads version "
                    + VERSION + ")");
        }
        if (context.length < 4) {
            throw new IllegalArgumentException("tcp context truncated: " + context.length + " bytes, the header alone needs 4");
        }
        ByteBuffer b = ByteBuffer.wrap(context);
        b.get();
        int port = b.getShort() & 0xffff;
        int hostLength = b.get() & 0xff;
        if (hostLength == 0) {
            throw new IllegalArgumentException("tcp context names an empty host");
        }
        if (b.remaining() != hostLength) {
            throw new IllegalArgumentException("tcp context host needs " + hostLength + " bytes, " + b.remaining() + " present");
        }
        if (port == 0) {
            throw new IllegalArgumentException("tcp context names port 0");
        }
        String host;
        try {
            host = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(b).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("tcp context host is not valid UTF-8");
        }
        return new Endpoint(host, port);
    }
}
