package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpContextCodecTest {

    @Test
    void encode_thenDecode_returnsSameEndpoint() {
        Endpoint endpoint = new Endpoint("host-ä.example", 40123);

        Endpoint decoded = TcpContextCodec.decode(TcpContextCodec.encode(endpoint));

        assertEquals(endpoint, decoded);
    }

    @Test
    void encode_writesVersionPortHostLengthHost() {
        byte[] bytes = TcpContextCodec.encode(new Endpoint("h", 0x1234));

        assertArrayEquals(new byte[]{1, 0x12, 0x34, 1, 'h'}, bytes);
    }

    @Test
    void decode_unknownVersion_rejectedNamingIt() {
        byte[] bytes = TcpContextCodec.encode(new Endpoint("h", 1));
        bytes[0] = 2;

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TcpContextCodec.decode(bytes));

        assertTrue(e.getMessage().contains("version 2"), e.getMessage());
    }

    @Test
    void decode_truncatedHost_rejected() {
        byte[] bytes = TcpContextCodec.encode(new Endpoint("host", 1));

        assertThrows(IllegalArgumentException.class, () -> TcpContextCodec.decode(Arrays.copyOf(bytes, bytes.length - 1)));
    }

    @Test
    void decode_trailingBytes_rejected() {
        byte[] bytes = TcpContextCodec.encode(new Endpoint("host", 1));

        assertThrows(IllegalArgumentException.class, () -> TcpContextCodec.decode(Arrays.copyOf(bytes, bytes.length + 1)));
    }

    @Test
    void decode_emptyOrPortZero_rejected() {
        assertThrows(IllegalArgumentException.class, () -> TcpContextCodec.decode(new byte[0]));
        assertThrows(IllegalArgumentException.class, () -> TcpContextCodec.decode(new byte[]{1, 0, 0, 1, 'h'}));
    }
}
