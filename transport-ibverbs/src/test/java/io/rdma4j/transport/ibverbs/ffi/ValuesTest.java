package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The small value types of the bindings: GIDs, queue-pair states, transition attributes. */
class ValuesTest {

    private static byte[] ipv4Mapped(int a, int b, int c, int d) {
        byte[] raw = new byte[16];
        raw[10] = (byte) 0xff;
        raw[11] = (byte) 0xff;
        raw[12] = (byte) a;
        raw[13] = (byte) b;
        raw[14] = (byte) c;
        raw[15] = (byte) d;
        return raw;
    }

    @Test
    void gid_ipv4Mapped_recognisedAndPrintedAsEightGroups() {
        Gid gid = Gid.of(ipv4Mapped(192, 0, 2, 1));

        assertTrue(gid.isIpv4Mapped());
        assertFalse(gid.isZero());
        assertEquals("0000:0000:0000:0000:0000:ffff:c000:0201", gid.toString());
    }

    @Test
    void gid_linkLocal_notIpv4Mapped() {
        byte[] raw = new byte[16];
        raw[0] = (byte) 0xfe;
        raw[1] = (byte) 0x80;

        assertFalse(Gid.of(raw).isIpv4Mapped());
    }

    @Test
    void gid_copiesItsBytes() {
        byte[] raw = ipv4Mapped(10, 0, 0, 1);
        Gid gid = Gid.of(raw);

        raw[15] = 9;
        gid.raw()[15] = 9;

        assertEquals(Gid.of(ipv4Mapped(10, 0, 0, 1)), gid);
    }

    @Test
    void gid_wrongLength_rejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Gid.of(new byte[4]));
        assertEquals("a GID has 16 bytes, got 4", e.getMessage());
    }

    @Test
    void queuePairState_ofEachCValue() {
        assertEquals(QueuePairState.RESET, QueuePairState.of(Ibv.IBV_QPS_RESET));
        assertEquals(QueuePairState.READY_TO_SEND, QueuePairState.of(Ibv.IBV_QPS_RTS));
        assertEquals(QueuePairState.ERROR, QueuePairState.of(Ibv.IBV_QPS_ERR));
        assertEquals(QueuePairState.UNKNOWN, QueuePairState.of(99));
    }

    @Test
    void readyToReceive_psnWiderThan24Bits_rejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ReadyToReceive(Ibv.IBV_MTU_1024, 17, 1 << 24, 16, 12, 1, 0, null, 1, 64));
        assertEquals("receive PSN must be in [0, 16777215], got 16777216", e.getMessage());
    }

    @Test
    void readyToSend_retryCountAbove7_rejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ReadyToSend(0, 14, 8, 7, 16));
        assertEquals("retry count must be in [0, 7], got 8", e.getMessage());
    }

    @Test
    void statusText_remoteAccessError_fromTheLibrary() {
        assertEquals("remote access error", WorkCompletions.statusText(Ibv.IBV_WC_REM_ACCESS_ERR));
        assertEquals("success", WorkCompletions.statusText(Ibv.IBV_WC_SUCCESS));
        assertEquals("unknown", WorkCompletions.statusText(-1));
    }
}
