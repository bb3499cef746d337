package io.rdma4j;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;
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
                Arguments.of("future version", edit(good, b -> b.put(4, (byte) 2)), "unsupported version 2"),
                Arguments.of("unknown flags", edit(good, b -> b.put(5, (byte) 1)), "unknown flags"),
                Arguments.of("negative id", edit(good, b -> b.putLong(22, -1)), "negative buffer id"),
                Arguments.of("zero size", edit(good, b -> b.putLong(30, 0)), "size must be positive"),
                Arguments.of("negative size", edit(good, b -> b.putLong(30, Long.MIN_VALUE)), "size must be positive"),
                Arguments.of("empty host", edit(good, b -> b.put(hostLenAt, (byte) 0)), "empty owner host"),
                Arguments.of("host longer than the token", edit(good, b -> b.put(hostLenAt, (byte) 0xff)), "truncated"),
                Arguments.of("port zero", edit(good, b -> b.putShort(countAt - 2, (short) 0)), "owner port 0"),
                Arguments.of("too many contexts", edit(good, b -> b.put(countAt, (byte) 200)), "more than 16"),
                Arguments.of("context count past the end", edit(good, b -> b.put(countAt, (byte) 3)), "truncated"),
                Arguments.of("bad transport name", edit(good, b -> b.put(countAt + 2, (byte) 'X')), "bad transport name"),
                Arguments.of("context length huge", edit(good, b -> b.putShort(countAt + 1 + 1 + 7, (short) 0xffff)),
                        "more than 4096"),
                Arguments.of("duplicate transport", duplicateTransport(), "appears twice"),
                Arguments.of("trailing bytes", Arrays.copyOf(good, good.length + 3), "3 trailing bytes"),
                Arguments.of("oversized input", new byte[RdmaRemoteBuffer.MAX_ENCODED_BYTES + 1], "more than the"),
                Arguments.of("host not UTF-8", invalidUtf8Host(), "not valid UTF-8"));
    }

    private static byte[] edit(byte[] good, UnaryOperator<ByteBuffer> change) {
        byte[] copy = good.clone();
        change.apply(ByteBuffer.wrap(copy));
        return copy;
    }

    private static byte[] duplicateTransport() {
        Map<String, byte[]> ctx = new LinkedHashMap<>();
        ctx.put("aaa", new byte[1]);
        ctx.put("bbb", new byte[1]);
        byte[] raw = token(ctx).toBytes();
        // rename the second "bbb" to "aaa"
        int at = raw.length - 1 - 2 - 3;
        raw[at] = 'a';
        raw[at + 1] = 'a';
        raw[at + 2] = 'a';
        return raw;
    }

    private static byte[] invalidUtf8Host() {
        RdmaRemoteBuffer t = new RdmaRemoteBuffer(INCARNATION, new Endpoint("ab", 1), 0, 1, KEY, Map.of());
        byte[] raw = t.toBytes();
        raw[Tokens.KEY_OFFSET + 16 + 1] = (byte) 0xC3; // lead byte followed by ASCII: malformed
        return raw;
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
    void fromBytes_randomCorruption_eitherDecodesOrFailsWithIllegalArgument() {
        byte[] good = sample().toBytes();
        Random random = new Random(20261202);

        for (int i = 0; i < 20_000; i++) {
            byte[] raw = good.clone();
            int flips = 1 + random.nextInt(4);
            for (int f = 0; f < flips; f++) {
                raw[random.nextInt(raw.length)] = (byte) random.nextInt(256);
            }
            if (random.nextInt(8) == 0) {
                raw = Arrays.copyOf(raw, random.nextInt(raw.length * 2));
            }
            try {
                RdmaRemoteBuffer t = RdmaRemoteBuffer.fromBytes(raw);
                assertArrayEquals(raw, t.toBytes(), "a decoded token re-encodes to the same bytes");
            } catch (IllegalArgumentException expected) {
                assertTrue(expected.getMessage().startsWith("malformed RDMA buffer token"), expected.getMessage());
            } catch (RuntimeException | Error other) {
                fail("corruption " + i + " threw " + other, other);
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
}
