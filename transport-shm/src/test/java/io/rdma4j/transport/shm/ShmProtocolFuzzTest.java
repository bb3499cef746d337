package io.rdma4j.transport.shm;

import io.rdma4j.spi.ErrorCode;
import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.UUID;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shm transport's decoders of what another process sends: the token context (in every token
 * a holder decodes), the ATTACH request (an owner decodes it from any process that reaches its
 * control endpoint) and the owner's reply (grant or refusal, as the holder reads it), each fed
 * 100,000 seeded random, valid and mutated inputs ({@link Fuzz}): every input decodes (a valid
 * one to what was encoded) or is refused with an {@link IllegalArgumentException}, as their
 * javadoc says; none throws anything else or allocates what a length field announces.
 */
class ShmProtocolFuzzTest {

    private static final int INPUTS = 100_000;

    private static HostIdentity randomHost(Random r) {
        return new HostIdentity(new UUID(r.nextLong(), r.nextLong()), r.nextLong(), r.nextLong(), r.nextLong(), r.nextInt());
    }

    private static String randomText(Random r, int maxChars) {
        StringBuilder s = new StringBuilder();
        for (int i = r.nextInt(maxChars + 1); i > 0; i--) {
            s.append(r.nextInt(8) == 0 ? (char) (0xa0 + r.nextInt(0x2000)) : (char) (' ' + r.nextInt(95)));
        }
        return s.toString();
    }

    private static byte[] randomContext(Random r) {
        String refusal = r.nextBoolean() ? "" : randomText(r, r.nextInt(10) == 0 ? 170 : 40);
        return new ShmContext(randomHost(r), 1 + (r.nextLong() & Long.MAX_VALUE - 1), Fuzz.randomBytes(r, ShmContext.SOCKET_BYTES),
                r.nextLong(), r.nextBoolean(), refusal).toBytes();
    }

    private static byte[] randomAttach(Random r) {
        return ShmProtocol.attach(Fuzz.randomBytes(r, 16), r.nextLong(), Fuzz.randomBytes(r, 16), randomHost(r));
    }

    private static byte[] randomReply(Random r) {
        if (r.nextInt(3) == 0) {
            int code = r.nextBoolean() ? ShmProtocol.NOT_PERMITTED & 0xff : ErrorCode.values()[r.nextInt(ErrorCode.values().length)].wire();
            return ShmProtocol.refused(code, randomText(r, 60));
        }
        return ShmProtocol.granted(new ShmProtocol.Grant(1 + r.nextInt(1 << 22),
                new AccessTable.Slot(r.nextInt(AccessTable.SLOTS), 1 + (r.nextLong() & Long.MAX_VALUE - 1)), r.nextLong(),
                1 + r.nextInt(1 << 30), r.nextBoolean()));
    }

    /** Noise, a valid message, or a valid message mutated (byte changes, flips, insertions, deletions, cuts). */
    private static Function<Random, byte[]> inputs(Function<Random, byte[]> valid) {
        return r -> switch (r.nextInt(4)) {
            case 0 -> Fuzz.randomBytes(r, r.nextInt(300));
            case 1 -> valid.apply(r);
            default -> Fuzz.mutate(r, valid.apply(r));
        };
    }

    /** Decodes, or checks that the refusal is the documented {@link IllegalArgumentException}. */
    private static boolean decodesOrIsRefused(Runnable decode) {
        try {
            decode.run();
            return true;
        } catch (IllegalArgumentException refused) {
            assertTrue(refused.getMessage() != null && !refused.getMessage().isBlank(), "a refusal says why");
            return false;
        }
    }

    @Test
    void tokenContext_100kRandomAndMutatedInputs_decodeOrAreRefusedAsIllegalArguments() {
        Fuzz.Outcome outcome = Fuzz.run("shm token context", 20261210L, INPUTS, inputs(ShmProtocolFuzzTest::randomContext),
                Fuzz::copiesOfFields, in -> decodesOrIsRefused(() -> {
                    ShmContext c = ShmContext.fromBytes(in);
                    assertEquals(c, ShmContext.fromBytes(c.toBytes()), "a decoded context re-encodes to itself");
                }));

        outcome.assertBothHappened();
    }

    @Test
    void tokenContext_valid_decodesToTheSameBytes() {
        Random r = new Random(11);
        for (int i = 0; i < 1000; i++) {
            byte[] valid = randomContext(r);
            assertArrayEquals(valid, ShmContext.fromBytes(valid).toBytes());
        }
    }

    @Test
    void attachRequest_100kRandomAndMutatedInputs_decodeOrAreRefusedAsIllegalArguments() {
        Fuzz.Outcome outcome = Fuzz.run("shm ATTACH request", 20261211L, INPUTS, inputs(ShmProtocolFuzzTest::randomAttach),
                Fuzz::copiesOfFields, in -> decodesOrIsRefused(() -> {
                    ShmProtocol.Attach a = ShmProtocol.readAttach(in);
                    assertArrayEquals(in, ShmProtocol.attach(a.incarnation(), a.bufferId(), a.accessKey(), a.holder()),
                            "a decoded request re-encodes to the same bytes");
                }));

        outcome.assertBothHappened();
    }

    /** As the holder reads a reply: its status, then the grant, or the refusal's code and text. */
    @Test
    void ownersReply_100kRandomAndMutatedInputs_decodeOrAreRefusedAsIllegalArguments() {
        Fuzz.Outcome outcome = Fuzz.run("shm owner's reply", 20261212L, INPUTS, inputs(ShmProtocolFuzzTest::randomReply),
                Fuzz::copiesOfFields, in -> decodesOrIsRefused(() -> {
                    int status = ShmProtocol.status(in);
                    if (status == ShmProtocol.GRANTED) {
                        ShmProtocol.Grant g = ShmProtocol.readGrant(in);
                        assertArrayEquals(in, ShmProtocol.granted(g), "a decoded grant re-encodes to the same bytes");
                    } else {
                        ErrorCode.fromWire(status);
                        ShmProtocol.message(in);
                    }
                }));

        outcome.assertBothHappened();
    }
}
