package io.rdma4j;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RdmaRemoteBuffer#fromBytes} on hostile input: every input decodes to a token that
 * re-encodes to the same bytes, or is refused with the documented {@link IllegalArgumentException};
 * nothing else is thrown and no decode allocates more than a small multiple of its input.
 */
class TokenFuzzTest {

    private static final String NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789_-";

    /** A valid token with random fields: ids, ranges, hosts (some not ASCII), up to 4 contexts. */
    static RdmaRemoteBuffer randomToken(Random r) {
        byte[] incarnation = Fuzz.randomBytes(r, 16);
        byte[] key = Fuzz.randomBytes(r, 16);
        StringBuilder host = new StringBuilder();
        int hostLength = 1 + r.nextInt(r.nextBoolean() ? 16 : 80);
        for (int i = 0; i < hostLength; i++) {
            host.append(r.nextInt(10) == 0 ? (char) (0xe0 + r.nextInt(32)) : (char) ('a' + r.nextInt(26)));
        }
        long size = r.nextBoolean() ? 1 + r.nextInt(1 << 20) : 1 + (r.nextLong() >>> 2);
        long id = r.nextBoolean() ? r.nextInt(1000) : r.nextLong() >>> 1;
        Map<String, byte[]> contexts = new LinkedHashMap<>();
        int count = r.nextInt(5);
        for (int i = 0; i < count; i++) {
            StringBuilder name = new StringBuilder();
            int nameLength = 1 + r.nextInt(8);
            for (int k = 0; k < nameLength; k++) {
                name.append(NAME_CHARS.charAt(r.nextInt(NAME_CHARS.length())));
            }
            contexts.put(name.toString(), Fuzz.randomBytes(r, r.nextInt(r.nextInt(8) == 0 ? 600 : 40)));
        }
        RdmaRemoteBuffer whole = new RdmaRemoteBuffer(incarnation, new Endpoint(host.toString(), 1 + r.nextInt(65535)),
                id, size, key, contexts);
        if (r.nextBoolean()) {
            return whole;
        }
        long offset = (long) (r.nextDouble() * (size - 1));
        return whole.slice(offset, 1 + (long) (r.nextDouble() * (size - offset - 1)));
    }

    /** Re-writes the trailing checksum, so that the decoder gets past it to the fields. */
    private static byte[] resealed(byte[] raw) {
        return raw.length >= 10 ? Tokens.resealed(raw) : raw;
    }

    static byte[] input(Random r) {
        return switch (r.nextInt(8)) {
            case 0 -> Fuzz.randomBytes(r, r.nextInt(200));                     // noise
            case 1 -> {                                                          // noise behind a good header, sealed
                byte[] b = Fuzz.randomBytes(r, 10 + r.nextInt(200));
                ByteBuffer.wrap(b).put(new byte[] {'R', 'D', 'M', 'B', RdmaRemoteBuffer.VERSION, 0});
                yield resealed(b);
            }
            case 2 -> randomToken(r).toBytes();                                  // valid
            case 3, 4 -> Fuzz.mutate(r, randomToken(r).toBytes());              // corrupted in transit
            default -> resealed(Fuzz.mutate(r, randomToken(r).toBytes()));      // corrupted, checksum fixed up
        };
    }

    @Test
    void fromBytes_100kRandomAndMutatedInputs_decodeToTheirOwnBytesOrAreRefusedAsMalformed() {
        Fuzz.Outcome outcome = Fuzz.run("token decoder", 20261203L, 100_000, TokenFuzzTest::input,
                // the copies of fields and a re-encoding: a small multiple of the input, never a length it announces
                in -> 16_384L + 16L * in.length,
                in -> {
                    RdmaRemoteBuffer t;
                    try {
                        t = RdmaRemoteBuffer.fromBytes(in);
                    } catch (IllegalArgumentException refused) {
                        assertTrue(refused.getMessage().startsWith("malformed RDMA buffer token"), refused.getMessage());
                        return false;
                    }
                    assertArrayEquals(in, t.toBytes(), "a decoded token re-encodes to the same bytes");
                    return true;
                });

        assertTrue(outcome.decoded() > outcome.inputs() / 10, "valid inputs decode: " + outcome);
        assertTrue(outcome.refused() > outcome.inputs() / 2, "corrupted inputs are refused: " + outcome);
    }

    @Test
    void fromBytes_corruptionsInTransit_neverDecodeToAnotherToken() {
        Fuzz.Outcome outcome = Fuzz.run("token decoder, unsealed corruptions", 20261204L, 100_000,
                r -> {
                    byte[] valid = randomToken(r).toBytes();
                    byte[] corrupted = Fuzz.mutate(r, valid);
                    return Arrays.equals(valid, corrupted) ? Fuzz.mutate(r, valid) : corrupted;
                },
                in -> 16_384L + 16L * in.length,
                in -> {
                    try {
                        RdmaRemoteBuffer.fromBytes(in);
                    } catch (IllegalArgumentException refused) {
                        return false;
                    }
                    return true;
                });

        // A corruption that happens to give the original bytes back (a deleted byte re-inserted) is
        // the only way to decode, and a random one decoding with a 2^-32 checksum is not expected.
        assertTrue(outcome.decoded() <= 5, "corrupted tokens that decoded: " + outcome);
    }

    @Test
    void randomToken_roundTripsThroughTheDecoder() {
        Random r = new Random(Long.getLong(Fuzz.SEED_PROPERTY, 7L));
        for (int i = 0; i < 1000; i++) {
            RdmaRemoteBuffer t = randomToken(r);
            assertEquals(t, RdmaRemoteBuffer.fromBytes(t.toBytes()));
        }
    }
}
