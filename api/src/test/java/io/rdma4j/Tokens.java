package io.rdma4j;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** Crafting tokens for tests, following the version 2 layout documented on {@link RdmaRemoteBuffer}. */
final class Tokens {

    /** Byte offset of the buffer id (magic, version, flags, incarnation). */
    static final int ID_OFFSET = 4 + 1 + 1 + 16;
    /** Byte offset of the slice offset. */
    static final int OFFSET_OFFSET = ID_OFFSET + 8;
    /** Byte offset of the length. */
    static final int LENGTH_OFFSET = OFFSET_OFFSET + 8;
    /** Byte offset of the access key. */
    static final int KEY_OFFSET = LENGTH_OFFSET + 8;

    private Tokens() {
    }

    /** Rewrites the trailing checksum of an edited encoding, so that the decoder reaches the edited fields. */
    static byte[] resealed(byte[] raw) {
        CRC32C crc = new CRC32C();
        crc.update(raw, 0, raw.length - 4);
        ByteBuffer.wrap(raw).putInt(raw.length - 4, (int) crc.getValue());
        return raw;
    }

    static RdmaRemoteBuffer withFlippedKeyByte(RdmaRemoteBuffer t) {
        byte[] raw = t.toBytes();
        raw[KEY_OFFSET] ^= 0x5a;
        return RdmaRemoteBuffer.fromBytes(resealed(raw));
    }
}
