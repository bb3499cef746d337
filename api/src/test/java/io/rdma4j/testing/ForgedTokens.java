package io.rdma4j.testing;

import io.rdma4j.RdmaRemoteBuffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Tokens a holder was never given, made by editing a real token's encoding as
 * {@link RdmaRemoteBuffer} documents it (version 2) and sealing it with a fresh checksum: what an
 * attacker who knows the format can send.
 */
public final class ForgedTokens {

    private static final int FLAGS_OFFSET = 4 + 1;
    private static final int INCARNATION_OFFSET = 4 + 1 + 1;
    private static final int ID_OFFSET = INCARNATION_OFFSET + 16;
    private static final int LENGTH_OFFSET = ID_OFFSET + 8 + 8;
    private static final int KEY_OFFSET = LENGTH_OFFSET + 8;

    private ForgedTokens() {
    }

    /** {@code t} naming buffer {@code id} instead. */
    public static RdmaRemoteBuffer withId(RdmaRemoteBuffer t, long id) {
        byte[] raw = t.toBytes();
        ByteBuffer.wrap(raw).putLong(ID_OFFSET, id);
        return reseal(raw);
    }

    /** {@code t} claiming {@code size} bytes. */
    public static RdmaRemoteBuffer withSize(RdmaRemoteBuffer t, long size) {
        byte[] raw = t.toBytes();
        ByteBuffer.wrap(raw).putLong(LENGTH_OFFSET, size);
        return reseal(raw);
    }

    /** {@code t} with one access-key byte changed. */
    public static RdmaRemoteBuffer withWrongKey(RdmaRemoteBuffer t) {
        byte[] raw = t.toBytes();
        raw[KEY_OFFSET + 5] ^= 0x5a;
        return reseal(raw);
    }

    /** {@code t} with its read-only flag cleared: a token edited to claim write access to a read-only buffer. */
    public static RdmaRemoteBuffer withWritesAllowed(RdmaRemoteBuffer t) {
        byte[] raw = t.toBytes();
        raw[FLAGS_OFFSET] = 0;
        return reseal(raw);
    }

    /** {@code t} as an earlier incarnation of its owner would have issued it. */
    public static RdmaRemoteBuffer ofAnotherIncarnation(RdmaRemoteBuffer t) {
        byte[] raw = t.toBytes();
        raw[INCARNATION_OFFSET] ^= 1;
        return reseal(raw);
    }

    private static RdmaRemoteBuffer reseal(byte[] raw) {
        CRC32C crc = new CRC32C();
        crc.update(raw, 0, raw.length - 4);
        ByteBuffer.wrap(raw).putInt(raw.length - 4, (int) crc.getValue());
        return RdmaRemoteBuffer.fromBytes(raw);
    }
}
