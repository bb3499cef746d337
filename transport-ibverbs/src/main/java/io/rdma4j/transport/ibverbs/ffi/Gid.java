package io.rdma4j.transport.ibverbs.ffi;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A 16-byte global identifier ({@code union ibv_gid}): the address of a port in a GID table.
 * On RoCE it is an IPv6 address, or an IPv4-mapped one ({@code ::ffff:a.b.c.d}). Immutable.
 */
public final class Gid {

    /** Bytes in a GID. */
    public static final int BYTES = 16;

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /**
     * A GID from its 16 bytes, in network order (copied).
     *
     * @param raw the bytes
     * @return the GID
     * @throws IllegalArgumentException if {@code raw} is not 16 bytes long
     */
    public static Gid of(byte[] raw) {
        if (Objects.requireNonNull(raw, "raw").length != BYTES) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + raw.length);
        }
        return new Gid(raw.clone());
    }

    /**
     * The bytes (a copy).
     *
     * @return 16 bytes in network order
     */
    public byte[] raw() {
        return raw.clone();
    }

    /**
     * Whether every byte is zero (an unused GID table entry).
     *
     * @return true for {@code ::}
     */
    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether this is an IPv4-mapped address, {@code ::ffff:a.b.c.d}: the GID RoCE v2 gives a
     * port for each of its netdev's IPv4 addresses.
     *
     * @return true when the first 10 bytes are zero and the next two 0xff
     */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /** Eight colon-separated groups of four hex digits, e.g. {@code 0000:0000:0000:0000:0000:ffff:c000:0201}. */
    @Override
    public String toString() {
        String hex = HexFormat.of().formatHex(raw);
        StringBuilder s = new StringBuilder(39);
        for (int i = 0; i < 32; i += 4) {
            if (i > 0) {
                s.append(':');
            }
            s.append(hex, i, i + 4);
        }
        return s.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid g && Arrays.equals(raw, g.raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }
}
