package io.rdma4j.transport.tcp;

import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The TCP data protocol's decoders ({@link TcpProtocol}) on hostile bytes: a request header as
 * the data endpoint reads it, a reply preamble and an ERROR body as a requester reads them. Each
 * returns a value that keeps the protocol's rules or throws {@link TcpProtocolException}, and
 * none allocates more than a small constant whatever lengths the bytes announce.
 */
class TcpFrameFuzzTest {

    private static final int[] TYPES = {TcpProtocol.WRITE, TcpProtocol.READ, TcpProtocol.OK, TcpProtocol.DATA,
            TcpProtocol.ERROR, 0, 0xff};

    /** A well-formed request header: a WRITE announcing its payload, or a READ. */
    static byte[] validRequest(Random r) {
        boolean write = r.nextBoolean();
        long length = r.nextInt(4) == 0 ? TcpProtocol.MAX_CHUNK_BYTES - r.nextInt(3) : r.nextInt(1 << 20);
        ByteBuffer b = ByteBuffer.allocate(TcpProtocol.REQUEST_HEADER_BYTES);
        TcpProtocol.putPreamble(b, write ? TcpProtocol.WRITE : TcpProtocol.READ,
                (int) (TcpProtocol.REQUEST_FIXED_BYTES + (write ? length : 0)));
        b.putLong(r.nextLong()).put(Fuzz.randomBytes(r, 16)).put(Fuzz.randomBytes(r, 16)).putLong(r.nextLong()).putLong(length);
        return b.array();
    }

    static byte[] requestInput(Random r) {
        byte[] b = switch (r.nextInt(4)) {
            case 0 -> Fuzz.randomBytes(r, TcpProtocol.REQUEST_HEADER_BYTES);
            case 1 -> validRequest(r);
            case 2 -> { // a good preamble with a random type and length
                byte[] v = validRequest(r);
                ByteBuffer.wrap(v).put(3, (byte) TYPES[r.nextInt(TYPES.length)]).putInt(4, r.nextInt())
                        .putLong(TcpProtocol.LENGTH_AT, r.nextBoolean() ? r.nextLong() : r.nextInt());
                yield v;
            }
            default -> Fuzz.mutate(r, validRequest(r));
        };
        return Arrays.copyOf(b, TcpProtocol.REQUEST_HEADER_BYTES); // the endpoint reads exactly a header
    }

    /** A well-formed reply: preamble and, for ERROR, its body. */
    static byte[] validReply(Random r) {
        return switch (r.nextInt(3)) {
            case 0 -> {
                ByteBuffer b = ByteBuffer.allocate(TcpProtocol.PREAMBLE_BYTES);
                TcpProtocol.putPreamble(b, TcpProtocol.OK, 0);
                yield b.array();
            }
            case 1 -> {
                ByteBuffer b = ByteBuffer.allocate(TcpProtocol.PREAMBLE_BYTES);
                TcpProtocol.putPreamble(b, TcpProtocol.DATA, r.nextBoolean() ? r.nextInt(1 << 20) : TcpProtocol.MAX_CHUNK_BYTES);
                yield b.array();
            }
            default -> {
                StringBuilder text = new StringBuilder();
                int n = r.nextInt(r.nextInt(10) == 0 ? 5000 : 80);
                for (int i = 0; i < n; i++) {
                    text.append(r.nextInt(10) == 0 ? (char) (0x400 + r.nextInt(64)) : (char) ('a' + r.nextInt(26)));
                }
                ByteBuffer frame = TcpProtocol.errorFrame(1 + r.nextInt(6), text.toString());
                byte[] b = new byte[frame.remaining()];
                frame.get(b);
                yield b;
            }
        };
    }

    static byte[] replyInput(Random r) {
        byte[] b = switch (r.nextInt(4)) {
            case 0 -> Fuzz.randomBytes(r, TcpProtocol.PREAMBLE_BYTES + r.nextInt(100));
            case 1 -> validReply(r);
            case 2 -> {
                byte[] v = validReply(r);
                ByteBuffer.wrap(v).put(3, (byte) TYPES[r.nextInt(TYPES.length)]).putInt(4, r.nextInt(1 << r.nextInt(31)));
                yield v;
            }
            default -> Fuzz.mutate(r, validReply(r));
        };
        return b.length >= TcpProtocol.PREAMBLE_BYTES ? b : Arrays.copyOf(b, TcpProtocol.PREAMBLE_BYTES);
    }

    @Test
    void requestDecoder_100kRandomAndMutatedHeaders_returnALengthWithinTheRulesOrAProtocolException() {
        Fuzz.Outcome outcome = Fuzz.run("tcp request header decoder", 20261206L, 100_000, TcpFrameFuzzTest::requestInput,
                in -> 16_384L, // messages and exceptions only: nothing sized by the input
                in -> {
                    ByteBuffer header = ByteBuffer.wrap(in);
                    int length;
                    try {
                        long bodyLength = TcpProtocol.requestBodyLength(header);
                        assertTrue(bodyLength >= TcpProtocol.REQUEST_FIXED_BYTES, "body " + bodyLength);
                        length = TcpProtocol.requestLength(header);
                    } catch (TcpProtocolException malformed) {
                        return false;
                    }
                    int type = in[3];
                    long bodyLength = header.getInt(4) & 0xffffffffL;
                    assertTrue(type == TcpProtocol.WRITE || type == TcpProtocol.READ, "type " + type);
                    assertTrue(length >= 0 && length <= TcpProtocol.MAX_CHUNK_BYTES, "length " + length);
                    assertEquals(header.getLong(TcpProtocol.LENGTH_AT), length);
                    assertEquals(TcpProtocol.REQUEST_FIXED_BYTES + (type == TcpProtocol.WRITE ? length : 0), bodyLength);
                    return true;
                });

        assertTrue(outcome.decoded() > outcome.inputs() / 10, "well-formed headers decode: " + outcome);
        assertTrue(outcome.refused() > outcome.inputs() / 10, "malformed headers are refused: " + outcome);
    }

    @Test
    void replyDecoders_100kRandomAndMutatedReplies_returnAReplyWithinTheRulesOrAProtocolException() {
        Fuzz.Outcome outcome = Fuzz.run("tcp reply decoder", 20261207L, 100_000, TcpFrameFuzzTest::replyInput,
                // the ERROR text, decoded, at most 4096 bytes; nothing sized by an announced length
                in -> 32_768L + 8L * in.length,
                in -> {
                    ByteBuffer preamble = ByteBuffer.wrap(in, 0, TcpProtocol.PREAMBLE_BYTES);
                    int expected = in.length % 2 == 0 ? TcpProtocol.OK : TcpProtocol.DATA;
                    int bodyLength;
                    try {
                        bodyLength = TcpProtocol.replyBodyLength(preamble, expected);
                    } catch (TcpProtocolException malformed) {
                        return false;
                    }
                    int type = in[3] & 0xff;
                    if (type == TcpProtocol.OK) {
                        assertEquals(TcpProtocol.OK, expected);
                        assertEquals(0, bodyLength);
                        return true;
                    }
                    if (type == TcpProtocol.DATA) {
                        assertEquals(TcpProtocol.DATA, expected);
                        assertTrue(bodyLength >= 0 && bodyLength <= TcpProtocol.MAX_CHUNK_BYTES, "body " + bodyLength);
                        return true;
                    }
                    assertEquals(TcpProtocol.ERROR, type);
                    assertTrue(bodyLength >= 3 && bodyLength <= 3 + TcpProtocol.MAX_ERROR_TEXT_BYTES, "body " + bodyLength);
                    if (in.length - TcpProtocol.PREAMBLE_BYTES < bodyLength) {
                        return true; // the requester would wait for the rest: the stream decides, not the decoder
                    }
                    TcpRefusedException refused;
                    try {
                        refused = TcpProtocol.decodeError(ByteBuffer.wrap(in, TcpProtocol.PREAMBLE_BYTES, bodyLength));
                    } catch (TcpProtocolException malformed) {
                        return false;
                    }
                    assertEquals(in[TcpProtocol.PREAMBLE_BYTES] & 0xff, refused.code());
                    assertTrue(refused.getMessage().getBytes(StandardCharsets.UTF_8).length <= 3 * TcpProtocol.MAX_ERROR_TEXT_BYTES);
                    return true;
                });

        assertTrue(outcome.decoded() > outcome.inputs() / 10, "well-formed replies decode: " + outcome);
        assertTrue(outcome.refused() > outcome.inputs() / 10, "malformed replies are refused: " + outcome);
    }

    @Test
    void requestDecoder_readOfANegativeLength_isMalformed() {
        byte[] header = validRequest(new Random(1));
        ByteBuffer.wrap(header).put(3, (byte) TcpProtocol.READ).putInt(4, TcpProtocol.REQUEST_FIXED_BYTES)
                .putLong(TcpProtocol.LENGTH_AT, -5);

        TcpProtocolException e = org.junit.jupiter.api.Assertions.assertThrows(TcpProtocolException.class,
                () -> TcpProtocol.requestLength(ByteBuffer.wrap(header)));

        assertTrue(e.getMessage().contains("READ of -5 bytes"), e.getMessage());
    }
}
