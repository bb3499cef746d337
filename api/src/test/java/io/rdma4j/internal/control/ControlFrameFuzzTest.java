package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The control protocol's decoders on hostile input: a stream of bytes is read frame by frame
 * and each body goes through every body decoder; each returns a value or throws
 * {@link Frames.ProtocolException}, and none allocates more than a small multiple of the bytes it
 * was given, whatever lengths those bytes announce.
 */
class ControlFrameFuzzTest {

    private static final Endpoint PEER = new Endpoint("127.0.0.1", 1);

    private static String randomText(Random r, int maxBytes) {
        StringBuilder sb = new StringBuilder();
        int n = r.nextInt(maxBytes + 1);
        for (int i = 0; i < n; i++) {
            sb.append(r.nextInt(8) == 0 ? (char) (0xc0 + r.nextInt(64)) : (char) ('a' + r.nextInt(26)));
        }
        return sb.toString();
    }

    /** One well-formed frame of a random kind. */
    static byte[] validFrame(Random r) {
        try {
            return switch (r.nextInt(5)) {
                case 0 -> Frames.encode(Frames.READINESS, new byte[0]);
                case 1 -> Frames.encode(Frames.RELEASE, Frames.release(Fuzz.randomBytes(r, 16), r.nextLong(), Fuzz.randomBytes(r, 16)));
                case 2 -> Frames.encode(Frames.TRANSPORT, Frames.transportRequest(randomText(r, 12),
                        new Endpoint("h" + randomText(r, 30), 1 + r.nextInt(65535)),
                        Fuzz.randomBytes(r, r.nextInt(8) == 0 ? r.nextInt(20_000) : r.nextInt(64))));
                case 3 -> Frames.encode(Frames.OK, Frames.readiness(
                        PeerReadiness.State.values()[r.nextInt(3)], randomText(r, 40)));
                default -> Frames.encode(Frames.ERROR, Frames.error((byte) (1 + r.nextInt(3)), randomText(r, 100)));
            };
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] input(Random r) {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        int frames = 1 + r.nextInt(3);
        for (int i = 0; i < frames; i++) {
            stream.writeBytes(validFrame(r));
        }
        byte[] valid = stream.toByteArray();
        return switch (r.nextInt(6)) {
            case 0 -> Fuzz.randomBytes(r, r.nextInt(300));                       // noise
            case 1 -> valid;                                                       // well-formed
            case 2 -> {                                                            // a length announcing much, little behind it
                byte[] b = valid.clone();
                ByteBuffer.wrap(b).putInt(0, r.nextBoolean() ? Frames.MAX_FRAME_BYTES - r.nextInt(16) : r.nextInt());
                yield b;
            }
            default -> Fuzz.mutate(r, valid);                                      // corrupted
        };
    }

    /** Reads every frame and decodes every body every way; true if the whole input decoded. */
    private static boolean decodeAll(byte[] input) throws IOException {
        ByteArrayInputStream in = new ByteArrayInputStream(input);
        while (true) {
            Frames.Frame f;
            try {
                f = Frames.read(in);
            } catch (Frames.ProtocolException refused) {
                return false;
            }
            if (f == null) {
                return true;
            }
            ByteBuffer body = f.body();
            try {
                Frames.parseRelease(body.duplicate());
            } catch (Frames.ProtocolException refused) {
                // documented
            }
            try {
                Frames.TransportRequest t = Frames.parseTransportRequest(body.duplicate());
                assertTrue(t.from().port() > 0);
            } catch (Frames.ProtocolException refused) {
                // documented
            }
            try {
                PeerReadiness p = Frames.parseReadiness(PEER, body.duplicate());
                assertTrue(p.state() != PeerReadiness.State.UNREACHABLE, "a peer cannot claim to be unreachable");
            } catch (Frames.ProtocolException refused) {
                // documented
            }
            try {
                Frames.parseError(body.duplicate());
            } catch (Frames.ProtocolException refused) {
                // documented
            }
        }
    }

    @Test
    void decoders_100kRandomAndMutatedStreams_returnAValueOrAProtocolException() {
        Fuzz.Outcome outcome = Fuzz.run("control frame decoder", 20261205L, 100_000, ControlFrameFuzzTest::input,
                // the frame, then four decoders' copies and strings of its body: a small multiple of
                // the bytes given, never what a length announces (up to 1 MiB)
                in -> 32_768L + 16L * in.length,
                ControlFrameFuzzTest::decodeAll);

        assertTrue(outcome.decoded() > outcome.inputs() / 10, "well-formed streams decode: " + outcome);
        assertTrue(outcome.refused() > outcome.inputs() / 10, "malformed streams are refused: " + outcome);
    }

    @Test
    void wellFormedFrames_decodeToWhatWasEncoded() throws IOException {
        Random r = new Random(Long.getLong(Fuzz.SEED_PROPERTY, 11L));
        for (int i = 0; i < 2000; i++) {
            byte[] incarnation = Fuzz.randomBytes(r, 16);
            long id = r.nextLong();
            byte[] key = Fuzz.randomBytes(r, 16);
            String name = randomText(r, 12);
            Endpoint from = new Endpoint("h" + randomText(r, 30), 1 + r.nextInt(65535));
            byte[] payload = Fuzz.randomBytes(r, r.nextInt(100));
            String message = randomText(r, 100);
            ByteArrayInputStream in = new ByteArrayInputStream(concat(
                    Frames.encode(Frames.RELEASE, Frames.release(incarnation, id, key)),
                    Frames.encode(Frames.TRANSPORT, Frames.transportRequest(name, from, payload)),
                    Frames.encode(Frames.ERROR, Frames.error((byte) 2, message))));

            Frames.Release release = Frames.parseRelease(Frames.read(in).body());
            Frames.TransportRequest request = Frames.parseTransportRequest(Frames.read(in).body());
            Frames.Error error = Frames.parseError(Frames.read(in).body());

            assertArrayEquals(incarnation, release.incarnation());
            assertEquals(id, release.bufferId());
            assertArrayEquals(key, release.accessKey());
            assertEquals(name, request.transport());
            assertEquals(from, request.from());
            assertArrayEquals(payload, request.payload());
            assertEquals(message, error.message());
            assertNull(Frames.read(in), "nothing follows");
        }
    }

    @Test
    void frameAnnouncingTheLargestBody_allocatesOnlyWhatArrives() throws IOException {
        byte[] header = ByteBuffer.allocate(5 + 10).putInt(Frames.MAX_FRAME_BYTES).put(Frames.TRANSPORT).array();

        Fuzz.Outcome outcome = Fuzz.run("control frame decoder, largest announced length", 1L, 1,
                r -> header, in -> 16_384L, in -> {
                    try {
                        Frames.read(new ByteArrayInputStream(in));
                        return true;
                    } catch (Frames.ProtocolException truncated) {
                        assertTrue(truncated.getMessage().contains("truncated"), truncated.getMessage());
                        return false;
                    }
                });

        assertEquals(1, outcome.refused());
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }
}
