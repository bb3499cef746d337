package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.spi.TransportException;
import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verbs transport's decoders of what a peer sends (the token context, and the handshake,
 * access check and probe a holder or owner sends over the control endpoint), each fed 100,000
 * seeded random, valid and mutated inputs: every input decodes (a valid one to what was encoded)
 * or is refused with a PROTOCOL error; none throws anything else or allocates what a length
 * field announces. Runs on the host: decoding needs no device.
 */
class VerbsWireFuzzTest {

    private static final int INPUTS = 100_000;

    private static String randomName(Random r) {
        char[] c = new char[1 + r.nextInt(12)];
        for (int i = 0; i < c.length; i++) {
            c[i] = (char) ('a' + r.nextInt(26));
        }
        return new String(c);
    }

    private static Gid randomGid(Random r) {
        return Gid.of(Fuzz.randomBytes(r, Gid.BYTES));
    }

    private static String randomIncarnation(Random r) {
        return HexFormat.of().formatHex(Fuzz.randomBytes(r, 16));
    }

    private static byte[] randomContext(Random r) {
        List<VerbsWire.RemoteMr> mrs = new ArrayList<>();
        for (int i = 1 + r.nextInt(3); i > 0; i--) {
            mrs.add(new VerbsWire.RemoteMr(randomName(r), randomGid(r), r.nextInt(1 << 16), 1 + r.nextInt(2), r.nextInt()));
        }
        return VerbsWire.context(r.nextLong() & Long.MAX_VALUE, r.nextLong() & Long.MAX_VALUE, mrs);
    }

    private static VerbsWire.Handshake randomHandshake(Random r) {
        return new VerbsWire.Handshake(randomIncarnation(r), randomIncarnation(r), randomName(r), r.nextInt(64),
                new VerbsWire.Endpoint(randomName(r), r.nextInt(1 << 24), r.nextInt(1 << 24), randomGid(r),
                        r.nextInt(1 << 16), 1 + r.nextInt(5)));
    }

    private static byte[] randomCheck(Random r) {
        return VerbsWire.check(Fuzz.randomBytes(r, 16), r.nextLong(), Fuzz.randomBytes(r, 16), r.nextLong(), r.nextLong());
    }

    /** Noise, a valid message, or a valid message mutated (byte changes, flips, insertions, deletions, cuts). */
    private static Function<Random, byte[]> inputs(Function<Random, byte[]> valid) {
        return r -> switch (r.nextInt(4)) {
            case 0 -> Fuzz.randomBytes(r, r.nextInt(300));
            case 1 -> valid.apply(r);
            default -> Fuzz.mutate(r, valid.apply(r));
        };
    }

    /** Decodes, or checks that the refusal is a PROTOCOL error. */
    private static boolean decodesOrIsRefused(Runnable decode) {
        try {
            decode.run();
            return true;
        } catch (TransportException refused) {
            assertEquals(TransportException.Kind.PROTOCOL, refused.kind(), refused.getMessage());
            return false;
        }
    }

    @Test
    void tokenContext_100kRandomAndMutatedInputs_decodeOrAreRefusedAsProtocolErrors() {
        Fuzz.Outcome outcome = Fuzz.run("ibverbs token context", 20261206L, INPUTS, inputs(VerbsWireFuzzTest::randomContext),
                Fuzz::copiesOfFields, in -> decodesOrIsRefused(() -> {
                    VerbsWire.RemoteRegion region = VerbsWire.decodeContext(in);
                    assertArrayEquals(in, VerbsWire.context(region.address, region.size, region.mrs),
                            "a decoded context re-encodes to the same bytes");
                }));

        outcome.assertBothHappened();
    }

    @Test
    void handshake_100kRandomAndMutatedInputs_decodeOrAreRefusedAsProtocolErrors() {
        Fuzz.Outcome outcome = Fuzz.run("ibverbs handshake", 20261207L, INPUTS,
                inputs(r -> randomHandshake(r).encode()), Fuzz::copiesOfFields,
                in -> decodesOrIsRefused(() -> VerbsWire.Handshake.decodeMessage(in)));

        outcome.assertBothHappened();
    }

    @Test
    void handshake_valid_decodesToWhatWasEncoded() {
        Random r = new Random(7);
        for (int i = 0; i < 1000; i++) {
            VerbsWire.Handshake h = randomHandshake(r);
            assertEquals(h, VerbsWire.Handshake.decodeMessage(h.encode()));
        }
    }

    @Test
    void accessCheck_100kRandomAndMutatedInputs_decodeOrAreRefusedAsProtocolErrors() {
        Fuzz.Outcome outcome = Fuzz.run("ibverbs access check", 20261208L, INPUTS, inputs(VerbsWireFuzzTest::randomCheck),
                Fuzz::copiesOfFields, in -> decodesOrIsRefused(() -> {
                    VerbsWire.Check c = VerbsWire.Check.decodeMessage(in);
                    assertArrayEquals(in, VerbsWire.check(c.incarnation(), c.bufferId(), c.accessKey(), c.offset(), c.length()),
                            "a decoded check re-encodes to the same bytes");
                }));

        outcome.assertBothHappened();
    }

    @Test
    void probe_100kRandomAndMutatedInputs_decodeOrAreRefusedAsProtocolErrors() {
        Fuzz.Outcome outcome = Fuzz.run("ibverbs probe", 20261209L, INPUTS,
                inputs(r -> new VerbsWire.Probe(randomIncarnation(r)).encode()), Fuzz::copiesOfFields,
                in -> decodesOrIsRefused(() -> {
                    VerbsWire.Probe p = VerbsWire.Probe.decodeMessage(in);
                    assertTrue(Arrays.equals(in, p.encode()), "a decoded probe re-encodes to the same bytes");
                }));

        outcome.assertBothHappened();
    }
}
