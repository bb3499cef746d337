package io.rdma4j;

/** Crafting tokens for tests. */
final class Tokens {

    /** Byte offset of the access key in the encoded token (magic, version, flags, incarnation, id, size). */
    static final int KEY_OFFSET = 4 + 1 + 1 + 16 + 8 + 8;

    private Tokens() {
    }

    static RdmaRemoteBuffer withFlippedKeyByte(RdmaRemoteBuffer t) {
        byte[] raw = t.toBytes();
        raw[KEY_OFFSET] ^= 0x5a;
        return RdmaRemoteBuffer.fromBytes(raw);
    }
}
