package io.rdma4j.transport.shm;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ShmContextTest {

    private static final HostIdentity HOST = new HostIdentity(UUID.randomUUID(), 1, 2, 3, 1000);

    @Test
    void toBytesThenFromBytes_roundTrips() {
        ShmContext c = new ShmContext(HOST, 4242, new byte[16], 0x7f00_0000_1000L, true, "refused: because");

        assertEquals(c, ShmContext.fromBytes(c.toBytes()));
    }

    @Test
    void fromBytes_everyTruncation_throwsIllegalArgument() {
        byte[] bytes = new ShmContext(HOST, 4242, new byte[16], 4096, false, "why").toBytes();
        for (int n = 0; n < bytes.length; n++) {
            byte[] cut = Arrays.copyOf(bytes, n);

            assertThrows(IllegalArgumentException.class, () -> ShmContext.fromBytes(cut), "length " + n);
        }
    }

    @Test
    void fromBytes_trailingBytes_throwIllegalArgument() {
        byte[] bytes = new ShmContext(HOST, 4242, new byte[16], 4096, false, "").toBytes();

        var e = assertThrows(IllegalArgumentException.class, () -> ShmContext.fromBytes(Arrays.copyOf(bytes, bytes.length + 1)));

        assertTrue(e.getMessage().contains("refusal"), e.getMessage());
    }

    @Test
    void fromBytes_unknownFormat_throwsIllegalArgument() {
        byte[] bytes = new ShmContext(HOST, 4242, new byte[16], 4096, false, "").toBytes();
        bytes[0] = 2;

        var e = assertThrows(IllegalArgumentException.class, () -> ShmContext.fromBytes(bytes));

        assertEquals("unknown shm context format 2", e.getMessage());
    }

    @Test
    void new_nonPositivePid_throwsIllegalArgument() {
        assertThrows(IllegalArgumentException.class, () -> new ShmContext(HOST, 0, new byte[16], 4096, false, ""));
    }
}
