package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.spi.TransportException;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bytes of the verbs transport: the token context (one memory region per device), the
 * handshake and the liveness probe, all versioned.
 */
class VerbsWireTest {

    private static Gid gid(int last) {
        byte[] raw = new byte[Gid.BYTES];
        raw[10] = (byte) 0xff;
        raw[11] = (byte) 0xff;
        raw[15] = (byte) last;
        return Gid.of(raw);
    }

    private static final List<VerbsWire.RemoteMr> TWO = List.of(
            new VerbsWire.RemoteMr("rxe0", gid(1), 0, 1, 0x1234),
            new VerbsWire.RemoteMr("rxe1", gid(2), 7, 1, 0x5678));

    @Test
    void context_twoDevices_decodesToWhatWasEncoded() {
        VerbsWire.RemoteRegion r = VerbsWire.decodeContext(VerbsWire.context(0x7f00_0000_1000L, 64L << 20, TWO));

        assertAll(
                () -> assertEquals(0x7f00_0000_1000L, r.address),
                () -> assertEquals(64L << 20, r.size),
                () -> assertEquals(TWO, r.mrs),
                () -> assertEquals(List.of("rxe0", "rxe1"), r.devices()));
    }

    @Test
    void context_versionOne_refusedSayingItIsFromAnOlderRdma4j() {
        byte[] v1 = VerbsWire.context(4096, 64, TWO);
        v1[0] = 1;

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(v1));

        assertAll(
                () -> assertEquals(TransportException.Kind.PROTOCOL, e.kind()),
                () -> assertTrue(e.getMessage().contains("version 1 (one device, from an older rdma4j) is not supported: "
                        + "this side reads version 2"), e.getMessage()));
    }

    @Test
    void context_unknownVersion_refused() {
        byte[] v9 = VerbsWire.context(4096, 64, TWO);
        v9[0] = 9;

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(v9));

        assertTrue(e.getMessage().contains("version 9 is not supported"), e.getMessage());
    }

    @Test
    void context_truncatedAnywhere_refusedAsTruncated() {
        byte[] whole = VerbsWire.context(4096, 64, TWO);
        for (int n = 1; n < whole.length; n++) {
            byte[] cut = Arrays.copyOf(whole, n);
            TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(cut), "at " + n);
            assertEquals(TransportException.Kind.PROTOCOL, e.kind());
        }
    }

    @Test
    void context_trailingBytes_refused() {
        byte[] whole = VerbsWire.context(4096, 64, TWO);
        byte[] longer = Arrays.copyOf(whole, whole.length + 3);

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(longer));

        assertTrue(e.getMessage().contains("3 trailing bytes"), e.getMessage());
    }

    @Test
    void context_noDevices_refusedAsGarbled() {
        byte[] none = ByteBuffer.allocate(18).put(VerbsWire.CONTEXT_VERSION).putLong(4096).putLong(64).put((byte) 0).array();

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(none));

        assertTrue(e.getMessage().contains("garbled: 0 devices"), e.getMessage());
    }

    @Test
    void context_empty_refused() {
        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.decodeContext(new byte[0]));

        assertTrue(e.getMessage().contains("empty"), e.getMessage());
    }

    private static final String HOLDER = "00112233445566778899aabbccddeeff";
    private static final String OWNER = "ffeeddccbbaa99887766554433221100";
    private static final VerbsWire.Handshake HANDSHAKE = new VerbsWire.Handshake(HOLDER, OWNER, "rxe1", 3,
            new VerbsWire.Endpoint("rxe0", 0x00ab_cdef, 0x0012_3456, gid(9), 17, 5));

    @Test
    void handshake_decodesToWhatWasEncoded_incarnationsAndSlotIncluded() {
        assertEquals(HANDSHAKE, VerbsWire.Handshake.decodeMessage(HANDSHAKE.encode()));
    }

    @Test
    void handshake_versionOne_refusedSayingItIsFromAnOlderRdma4j() {
        byte[] v1 = HANDSHAKE.encode();
        v1[0] = 1;

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Handshake.decodeMessage(v1));

        assertAll(
                () -> assertEquals(TransportException.Kind.PROTOCOL, e.kind()),
                () -> assertTrue(e.getMessage().contains("version 1 (from an older rdma4j, whose handshake names no "
                        + "incarnations or slot) is not supported (this side speaks 2)"), e.getMessage()));
    }

    @Test
    void handshake_unknownVersion_refused() {
        byte[] v7 = HANDSHAKE.encode();
        v7[0] = 7;

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Handshake.decodeMessage(v7));

        assertTrue(e.getMessage().contains("version 7 is not supported (this side speaks 2)"), e.getMessage());
    }

    @Test
    void handshake_truncatedAnywhere_refusedAsTruncated() {
        byte[] whole = HANDSHAKE.encode();
        for (int n = 0; n < whole.length; n++) {
            byte[] cut = Arrays.copyOf(whole, n);
            TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Handshake.decodeMessage(cut),
                    "at " + n);
            assertAll(
                    () -> assertEquals(TransportException.Kind.PROTOCOL, e.kind()),
                    () -> assertTrue(e.getMessage().contains("truncated"), e.getMessage()));
        }
    }

    @Test
    void handshake_trailingBytes_refused() {
        byte[] longer = Arrays.copyOf(HANDSHAKE.encode(), HANDSHAKE.encode().length + 2);

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Handshake.decodeMessage(longer));

        assertTrue(e.getMessage().contains("2 trailing bytes"), e.getMessage());
    }

    @Test
    void handshake_ofAnotherMessageType_refused() {
        byte[] check = VerbsWire.check(new byte[16], 1, new byte[16], 0, 8);

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Handshake.decodeMessage(check));

        assertTrue(e.getMessage().contains("expected an ibverbs handshake, got message type 2"), e.getMessage());
    }

    private static final VerbsWire.Probe PROBE = new VerbsWire.Probe(HOLDER);

    @Test
    void probe_decodesToWhatWasEncoded() {
        assertAll(
                () -> assertEquals(PROBE, VerbsWire.Probe.decodeMessage(PROBE.encode())),
                () -> assertEquals(VerbsWire.PROBE, PROBE.encode()[1]));
    }

    @Test
    void probe_truncatedAnywhere_refusedAsTruncated() {
        byte[] whole = PROBE.encode();
        for (int n = 0; n < whole.length; n++) {
            byte[] cut = Arrays.copyOf(whole, n);
            TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Probe.decodeMessage(cut), "at " + n);
            assertAll(
                    () -> assertEquals(TransportException.Kind.PROTOCOL, e.kind()),
                    () -> assertTrue(e.getMessage().contains("truncated ibverbs probe"), e.getMessage()));
        }
    }

    @Test
    void probe_trailingBytes_refused() {
        byte[] longer = Arrays.copyOf(PROBE.encode(), PROBE.encode().length + 3);

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Probe.decodeMessage(longer));

        assertAll(
                () -> assertEquals(TransportException.Kind.PROTOCOL, e.kind()),
                () -> assertTrue(e.getMessage().contains("3 trailing bytes"), e.getMessage()));
    }

    @Test
    void probe_namingNoIncarnation_refused() {
        byte[] empty = {VerbsWire.VERSION, VerbsWire.PROBE, 0};

        TransportException e = assertThrows(TransportException.class, () -> VerbsWire.Probe.decodeMessage(empty));

        assertTrue(e.getMessage().contains("names no incarnation"), e.getMessage());
    }

    @Test
    void probe_ofAnotherVersionOrMessageType_refusedSayingWhich() {
        byte[] v7 = PROBE.encode();
        v7[0] = 7;

        TransportException version = assertThrows(TransportException.class, () -> VerbsWire.Probe.decodeMessage(v7));
        TransportException type = assertThrows(TransportException.class, () -> VerbsWire.Probe.decodeMessage(HANDSHAKE.encode()));

        assertAll(
                () -> assertTrue(version.getMessage().contains("version 7 is not supported (this side speaks 2)"),
                        version.getMessage()),
                () -> assertTrue(type.getMessage().contains("expected an ibverbs probe, got message type 1"), type.getMessage()));
    }

    @Test
    void checkAnswer_saysReadOnly_andAnOlderOwnersBareZeroReadsAsWritable() {
        byte[] readOnly = VerbsWire.allowed(true);
        byte[] writable = VerbsWire.allowed(false);

        assertAll(
                () -> assertEquals(0, readOnly[0], "an older holder reads only the leading 0: allowed"),
                () -> assertEquals(0, writable[0]),
                () -> assertTrue(VerbsWire.allowsReadOnly(readOnly)),
                () -> assertFalse(VerbsWire.allowsReadOnly(writable)),
                () -> assertFalse(VerbsWire.allowsReadOnly(VerbsWire.answer(0, "")), "an older owner's answer"));
    }
}
