package io.rdma4j.transport.shm;

import io.rdma4j.spi.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class ShmProtocolTest {

    private static final HostIdentity HOST = new HostIdentity(UUID.randomUUID(), 1, 2, 3, 1000);

    @Test
    void attach_roundTrips() {
        byte[] incarnation = new byte[16];
        Arrays.fill(incarnation, (byte) 7);
        byte[] key = new byte[16];
        Arrays.fill(key, (byte) 9);

        ShmProtocol.Attach a = ShmProtocol.readAttach(ShmProtocol.attach(incarnation, 42, key, HOST));

        assertArrayEquals(incarnation, a.incarnation());
        assertEquals(42, a.bufferId());
        assertArrayEquals(key, a.accessKey());
        assertEquals(HOST, a.holder());
    }

    @Test
    void readAttach_wrongLength_throwsIllegalArgument() {
        byte[] request = ShmProtocol.attach(new byte[16], 1, new byte[16], HOST);

        assertThrows(IllegalArgumentException.class, () -> ShmProtocol.readAttach(Arrays.copyOf(request, request.length - 1)));
    }

    @Test
    void grant_roundTrips() {
        ShmProtocol.Grant g = new ShmProtocol.Grant(4242, new AccessTable.Slot(3, 99), 0x7f00_0000_0000L, 4096, true);

        assertEquals(g, ShmProtocol.readGrant(ShmProtocol.granted(g)));
    }

    @Test
    void readGrant_memoryFileFlagOtherThan0Or1_throwsIllegalArgument() {
        byte[] reply = ShmProtocol.granted(new ShmProtocol.Grant(4242, new AccessTable.Slot(3, 99), 4096, 4096, false));
        reply[reply.length - 1] = 2;

        assertThrows(IllegalArgumentException.class, () -> ShmProtocol.readGrant(reply));
    }

    @Test
    void refused_carriesCodeAndMessage() {
        byte[] reply = ShmProtocol.refused(ErrorCode.ACCESS_DENIED.wire(), ShmProtocol.denied(5));

        assertEquals(ErrorCode.ACCESS_DENIED.wire(), ShmProtocol.status(reply));
        assertEquals("access to buffer 5 denied: no such buffer, released, or wrong access key", ShmProtocol.message(reply));
    }
}
