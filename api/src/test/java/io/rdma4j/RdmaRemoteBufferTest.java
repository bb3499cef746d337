package io.rdma4j;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

class RdmaRemoteBufferTest {

    private static final byte[] INCARNATION = bytes(16, 1);
    private static final byte[] KEY = bytes(16, 9);

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    private static RdmaRemoteBuffer token(Map<String, byte[]> contexts) {
        return new RdmaRemoteBuffer(INCARNATION, new Endpoint("10.1.2.3", 40123), 7, 1 << 20, KEY, contexts);
    }

    private static RdmaRemoteBuffer sample() {
        Map<String, byte[]> ctx = new LinkedHashMap<>();
        ctx.put("ibverbs", bytes(40, 2));
        ctx.put("tcp", bytes(12, 3));
        return token(ctx);
    }

    @Test
    void toBytes_thenFromBytes_givesAnEqualToken() {
        RdmaRemoteBuffer t = sample();

        RdmaRemoteBuffer back = RdmaRemoteBuffer.fromBytes(t.toBytes());

        assertEquals(t, back);
        assertEquals(7, back.id());
        assertEquals(1 << 20, back.size());
        assertEquals(new Endpoint("10.1.2.3", 40123), back.owner());
        assertEquals(List.of("ibverbs", "tcp"), List.copyOf(back.transports()));
        assertArrayEquals(KEY, back.accessKey());
    }

    @Test
    void fromBytes_contextOfAnUnknownTransport_isKeptAndSurvivesReencoding() {
        Map<String, byte[]> ctx = new LinkedHashMap<>();
        ctx.put("shm-future", bytes(5, 4));
        ctx.put("tcp", bytes(12, 3));

        RdmaRemoteBuffer back = RdmaRemoteBuffer.fromBytes(RdmaRemoteBuffer.fromBytes(token(ctx).toBytes()).toBytes());

        assertTrue(back.hasTransport("shm-future"));
        assertArrayEquals(bytes(5, 4), back.refFor("shm-future").context());
    }

    @Test
    void refFor_givesTheTransportItsContextAndTheBufferIdentity() {
        RemoteBufferRef ref = sample().refFor("tcp");

        assertArrayEquals(bytes(12, 3), ref.context());
        assertEquals(7, ref.bufferId());
        assertArrayEquals(KEY, ref.accessKey());
        assertEquals(40123, ref.owner().port());
    }

    @Test
    void refFor_absentTransport_rejected() {
        assertThrows(IllegalArgumentException.class, () -> sample().refFor("efa"));
    }

    @Test
    void testJarTokenRefs_readFromTheWireForm_equalTheManagersRefFor_forWholeBuffersAndSlices() {
        for (RdmaRemoteBuffer t : List.of(sample(), sample().slice(64, 32), token(Map.of("tcp", bytes(3, 1), "x", bytes(0, 0))))) {
            for (String transport : t.transports()) {
                assertEquals(t.refFor(transport), TokenRefs.refFor(t, transport), t + " for " + transport);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> TokenRefs.refFor(sample(), "efa"));
    }

    @Test
    void readOnlyToken_roundTripsReadOnly_andItsSlicesStayReadOnly() {
        RdmaRemoteBuffer t = readOnly(sample());

        RdmaRemoteBuffer back = RdmaRemoteBuffer.fromBytes(t.toBytes());

        assertTrue(back.isReadOnly());
        assertEquals(t, back);
        assertTrue(back.slice(64, 32).isReadOnly());
        assertTrue(RdmaRemoteBuffer.fromBytes(back.slice(64, 32).toBytes()).isReadOnly());
        assertTrue(back.toString().contains("read-only"), back.toString());
    }

    @Test
    void readOnlyToken_differsFromTheWritableOne_onlyInTheFlagsByte() {
        RdmaRemoteBuffer writable = sample();
        RdmaRemoteBuffer readOnly = readOnly(writable);
        byte[] w = writable.toBytes();
        byte[] r = readOnly.toBytes();

        assertFalse(writable.isReadOnly());
        assertNotEquals(writable, readOnly);
        assertEquals(0, w[5], "a writable token's flags byte is 0, as before read-only buffers existed");
        assertEquals(1, r[5]);
        assertArrayEquals(Arrays.copyOfRange(w, 6, w.length - 4), Arrays.copyOfRange(r, 6, r.length - 4));
    }

    private static RdmaRemoteBuffer readOnly(RdmaRemoteBuffer t) {
        return new RdmaRemoteBuffer(t.incarnationBytes(), t.owner(), t.id(), t.offset(), t.size(), t.accessKey(), t.contexts(),
                true);
    }

    @Test
    void toBytes_ipv6OwnerAndUnicodeHost_roundTrip() {
        RdmaRemoteBuffer v6 = new RdmaRemoteBuffer(INCARNATION, new Endpoint("fe80::1", 1), 0, 1, KEY, Map.of());
        RdmaRemoteBuffer uni = new RdmaRemoteBuffer(INCARNATION, new Endpoint("hôte.example", 65535), Long.MAX_VALUE,
                Long.MAX_VALUE, KEY, Map.of());

        assertEquals(v6, RdmaRemoteBuffer.fromBytes(v6.toBytes()));
        assertEquals(uni, RdmaRemoteBuffer.fromBytes(uni.toBytes()));
    }

    static Stream<Arguments> malformed() {
        byte[] good = sample().toBytes();
        int hostLenAt = Tokens.KEY_OFFSET + 16;
        int hostLen = good[hostLenAt];
        int countAt = hostLenAt + 1 + hostLen + 2;
        return Stream.of(
                Arguments.of("null", null, "null"),
                Arguments.of("empty", new byte[0], "truncated"),
                Arguments.of("wrong magic", edit(good, b -> b.put(0, (byte) 'X')), "bad magic"),
                Arguments.of("future version", edit(good, b -> b.put(4, (byte) 3)),
                        "unsupported version 3 (this library reads version 2; the token was made by a newer rdma4j)"),
                Arguments.of("unknown flags", edit(good, b -> b.put(5, (byte) 0x02)), "unknown flags 0x2"),
                Arguments.of("unknown flags next to read-only", edit(good, b -> b.put(5, (byte) 0x81)), "unknown flags 0x80"),
                Arguments.of("negative id", edit(good, b -> b.putLong(Tokens.ID_OFFSET, -1)), "negative buffer id"),
                Arguments.of("negative offset", edit(good, b -> b.putLong(Tokens.OFFSET_OFFSET, -1)), "negative offset"),
                Arguments.of("zero length", edit(good, b -> b.putLong(Tokens.LENGTH_OFFSET, 0)), "length must be positive"),
                Arguments.of("negative length", edit(good, b -> b.putLong(Tokens.LENGTH_OFFSET, Long.MIN_VALUE)),
                        "length must be positive"),
                Arguments.of("range overflowing", edit(good, b -> b.putLong(Tokens.OFFSET_OFFSET, Long.MAX_VALUE)), "overflows"),
                Arguments.of("empty host", edit(good, b -> b.put(hostLenAt, (byte) 0)), "empty owner host"),
                Arguments.of("host longer than the token", edit(good, b -> b.put(hostLenAt, (byte) 0xff)), "truncated"),
                Arguments.of("port zero", edit(good, b -> b.putShort(countAt - 2, (short) 0)), "owner port 0"),
                Arguments.of("too many contexts", edit(good, b -> b.put(countAt, (byte) 200)), "more than 16"),
                Arguments.of("context count past the end", edit(good, b -> b.put(countAt, (byte) 3)), "truncated"),
                Arguments.of("bad transport name", edit(good, b -> b.put(countAt + 2, (byte) 'X')), "bad transport name"),
                Arguments.of("context length huge", edit(good, b -> b.putShort(countAt + 1 + 1 + 7, (short) 0xffff)),
                        "more than 4096"),
                Arguments.of("duplicate transport", duplicateTransport(), "appears twice"),
                Arguments.of("trailing bytes", Tokens.resealed(withTrailingBytes(good, 3)), "3 trailing bytes before the checksum"),
                Arguments.of("one byte changed", flipped(good, 40), "checksum mismatch"),
                Arguments.of("checksum changed", flipped(good, good.length - 1), "checksum mismatch"),
                Arguments.of("bytes appended", Arrays.copyOf(good, good.length + 3), "checksum mismatch"),
                Arguments.of("version 1 token", version1Token(), "unsupported version 1 (this library reads version 2; "
                        + "the token was made by an older rdma4j)"),
                Arguments.of("oversized input", new byte[RdmaRemoteBuffer.MAX_ENCODED_BYTES + 1], "more than the"),
                Arguments.of("host not UTF-8", invalidUtf8Host(), "not valid UTF-8"));
    }

    /** A copy of {@code good} changed by {@code change}, its checksum made to match again. */
    private static byte[] edit(byte[] good, UnaryOperator<ByteBuffer> change) {
        byte[] copy = good.clone();
        change.apply(ByteBuffer.wrap(copy));
        return Tokens.resealed(copy);
    }

    private static byte[] flipped(byte[] good, int at) {
        byte[] copy = good.clone();
        copy[at] ^= 0x01;
        return copy;
    }

    /** Inserts {@code n} zero bytes before the checksum. */
    private static byte[] withTrailingBytes(byte[] good, int n) {
        byte[] out = Arrays.copyOf(good, good.length + n);
        System.arraycopy(good, good.length - 4, out, out.length - 4, 4);
        Arrays.fill(out, good.length - 4, out.length - 4, (byte) 0);
        return out;
    }

    /** A token as rdma4j 0.x wrote it (wire format version 1: no offset, no checksum). */
    private static byte[] version1Token() {
        byte[] host = "10.1.2.3".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 1 + 16 + 8 + 8 + 16 + 1 + host.length + 2 + 1 + 1 + 3 + 2 + 12);
        b.put(new byte[] {'R', 'D', 'M', 'B'}).put((byte) 1).put((byte) 0).put(INCARNATION).putLong(7).putLong(1 << 20)
                .put(KEY).put((byte) host.length).put(host).putShort((short) 40123).put((byte) 1)
                .put((byte) 3).put("tcp".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putShort((short) 12)
                .put(bytes(12, 3));
        return b.array();
    }

    private static byte[] duplicateTransport() {
        Map<String, byte[]> ctx = new LinkedHashMap<>();
        ctx.put("aaa", new byte[1]);
        ctx.put("bbb", new byte[1]);
        byte[] raw = token(ctx).toBytes();
        // rename the second "bbb" to "aaa": it sits before its length (2), its byte and the checksum (4)
        int at = raw.length - 4 - 1 - 2 - 3;
        raw[at] = 'a';
        raw[at + 1] = 'a';
        raw[at + 2] = 'a';
        return Tokens.resealed(raw);
    }

    private static byte[] invalidUtf8Host() {
        RdmaRemoteBuffer t = new RdmaRemoteBuffer(INCARNATION, new Endpoint("ab", 1), 0, 1, KEY, Map.of());
        byte[] raw = t.toBytes();
        raw[Tokens.KEY_OFFSET + 16 + 1] = (byte) 0xC3; // lead byte followed by ASCII: malformed
        return Tokens.resealed(raw);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("malformed")
    void fromBytes_malformed_rejectedWithClearError(String what, byte[] raw, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaRemoteBuffer.fromBytes(raw));

        assertTrue(e.getMessage().startsWith("malformed RDMA buffer token"), e.getMessage());
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void fromBytes_everyTruncation_rejectedAsTruncated() {
        byte[] good = sample().toBytes();

        IntStream.range(0, good.length).forEach(n -> {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> RdmaRemoteBuffer.fromBytes(Arrays.copyOf(good, n)), "prefix of " + n);
            assertTrue(e.getMessage().contains("truncated"), e.getMessage());
        });
    }

    @Test
    void fromBytes_everySingleByteChange_refusedAndNeverNamesAnotherBuffer() {
        byte[] good = sample().toBytes();
        int mutants = 0;
        List<String> decoded = new java.util.ArrayList<>();

        for (int at = 0; at < good.length; at++) {
            for (int v = 0; v < 256; v++) {
                if ((byte) v == good[at]) {
                    continue;
                }
                byte[] raw = good.clone();
                raw[at] = (byte) v;
                mutants++;
                try {
                    decoded.add("byte " + at + " = " + v + " -> " + RdmaRemoteBuffer.fromBytes(raw));
                } catch (IllegalArgumentException expected) {
                    assertTrue(expected.getMessage().startsWith("malformed RDMA buffer token"), expected.getMessage());
                }
            }
        }

        assertEquals(good.length * 255, mutants);
        assertEquals(List.of(), decoded, "single-byte mutants of a " + good.length + "-byte token that still decode");
    }

    @Test
    void fromBytes_everySingleBitFlip_refusedAsCorrupted() {
        byte[] good = sample().toBytes();

        for (int bit = 0; bit < good.length * 8; bit++) {
            byte[] raw = good.clone();
            raw[bit / 8] ^= (byte) (1 << (bit % 8));
            int flipped = bit;
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaRemoteBuffer.fromBytes(raw),
                    () -> "bit " + flipped);
            if (bit / 8 > 5) { // past magic, version and flags the checksum is what catches it
                assertTrue(e.getMessage().contains("checksum mismatch"), e.getMessage());
            }
        }
    }

    @Test
    void toString_showsIdentityButNeverTheAccessKey() {
        String s = sample().toString();

        assertTrue(s.contains("id=7"), s);
        assertTrue(s.contains("10.1.2.3:40123"), s);
        assertFalse(s.contains(java.util.HexFormat.of().formatHex(KEY)), s);
    }

    @Test
    void constructor_contextLargerThanTheLimit_rejected() {
        assertThrows(IllegalArgumentException.class, () -> token(Map.of("tcp", new byte[4097])));
    }

    @Test
    void wholeBufferToken_startsAtOffsetZero() {
        assertEquals(0, sample().offset());
    }

    @Test
    void slice_namesPartOfTheSameBufferWithTheSameKeyAndTransports() {
        RdmaRemoteBuffer whole = sample();

        RdmaRemoteBuffer part = whole.slice(4096, 100);

        assertEquals(4096, part.offset());
        assertEquals(100, part.size());
        assertEquals(whole.id(), part.id());
        assertEquals(whole.owner(), part.owner());
        assertEquals(whole.ownerIncarnation(), part.ownerIncarnation());
        assertArrayEquals(whole.accessKey(), part.accessKey());
        assertEquals(whole.transports(), part.transports());
        assertEquals(1 << 20, whole.size(), "the token sliced is unchanged");
    }

    @Test
    void slice_ofASlice_countsItsOffsetFromTheStartOfTheBuffer() {
        RdmaRemoteBuffer part = sample().slice(1000, 500).slice(100, 50);

        assertEquals(1100, part.offset());
        assertEquals(50, part.size());
    }

    @Test
    void slice_survivesEncodingWithItsRange() {
        RdmaRemoteBuffer part = sample().slice(12345, 678);

        RdmaRemoteBuffer back = RdmaRemoteBuffer.fromBytes(part.toBytes());

        assertEquals(part, back);
        assertEquals(12345, back.offset());
        assertEquals(678, back.size());
    }

    @Test
    void slice_ofTheWholeBuffer_equalsTheToken() {
        RdmaRemoteBuffer whole = sample();

        assertEquals(whole, whole.slice(0, whole.size()));
        assertEquals(whole.hashCode(), whole.slice(0, whole.size()).hashCode());
    }

    @Test
    void equalsAndHashCode_tellSlicesOfDifferentRangesApart() {
        RdmaRemoteBuffer whole = sample();

        assertFalse(whole.slice(0, 10).equals(whole.slice(1, 10)));
        assertFalse(whole.slice(0, 10).equals(whole.slice(0, 11)));
        assertFalse(whole.equals(whole.slice(0, 10)));
        assertEquals(whole.slice(5, 10), whole.slice(5, 10));
        assertEquals(whole.slice(5, 10).hashCode(), whole.slice(5, 10).hashCode());
        assertFalse(whole.slice(0, 10).hashCode() == whole.slice(1, 10).hashCode());
    }

    @Test
    void toString_showsTheSliceRange() {
        String s = sample().slice(64, 32).toString();

        assertTrue(s.contains("offset=64"), s);
        assertTrue(s.contains("size=32"), s);
    }

    static Stream<Arguments> slicesOutside() {
        long size = 1 << 20;
        return Stream.of(
                Arguments.of(-1L, 10L),
                Arguments.of(0L, 0L),
                Arguments.of(0L, -5L),
                Arguments.of(0L, size + 1),
                Arguments.of(size, 1L),
                Arguments.of(size - 10, 11L),
                Arguments.of(Long.MAX_VALUE, 1L),
                Arguments.of(1L, Long.MAX_VALUE),
                Arguments.of(Long.MIN_VALUE, Long.MIN_VALUE));
    }

    @ParameterizedTest(name = "offset {0}, length {1}")
    @MethodSource("slicesOutside")
    void slice_notInsideTheToken_rejectedNamingTheRange(long offset, long length) {
        RdmaRemoteBuffer whole = sample();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> whole.slice(offset, length));

        assertTrue(e.getMessage().startsWith("slice [" + offset + ", " + offset + " + " + length + ") is not inside the "
                + whole.size() + " bytes"), e.getMessage());
    }

    @Test
    void slice_boundsAreThoseOfTheSliceNotOfTheBuffer() {
        RdmaRemoteBuffer part = sample().slice(100, 50);

        part.slice(49, 1);
        assertThrows(IllegalArgumentException.class, () -> part.slice(50, 1));
        assertThrows(IllegalArgumentException.class, () -> part.slice(0, 51));
    }

    @Test
    void refFor_sliceAtOffsetZero_isThePrefixOfTheBuffer() {
        RemoteBufferRef ref = sample().slice(0, 64).refFor("tcp");

        assertEquals(64, ref.size());
        assertEquals(7, ref.bufferId());
    }

    @Test
    void refFor_sliceAtANonzeroOffset_namesTheSameRegistrationWithTheSlicesSize() {
        RdmaRemoteBuffer part = sample().slice(64, 32);

        RemoteBufferRef ref = part.refFor("tcp");

        assertEquals(7, ref.bufferId());
        assertEquals(32, ref.size());
        assertEquals(64, part.offset());
    }
}
