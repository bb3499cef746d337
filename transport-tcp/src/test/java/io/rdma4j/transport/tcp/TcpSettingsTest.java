package io.rdma4j.transport.tcp;

import io.rdma4j.TransportUnavailableException;
import io.rdma4j.RdmaManager;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TcpSettingsTest {

    @Test
    void provider_isNamedTcpWithPriority100_andDeclaresEverySetting() {
        TcpTransportProvider provider = new TcpTransportProvider();

        assertEquals("tcp", provider.name());
        assertEquals(100, provider.priority());
        assertEquals(TcpSettings.all(), provider.settings());
    }

    @Test
    void defaults_matchTheReference() {
        assertEquals(true, TcpSettings.ALLOW_TCP_FALLBACK.defaultValue());
        assertEquals(64, TcpSettings.MAX_CHUNK_MIB.defaultValue());
        assertEquals(1, TcpSettings.PARALLELISM.defaultValue());
        assertEquals(0, TcpSettings.DATA_PORT.defaultValue());
        assertEquals(Duration.ofSeconds(60), TcpSettings.IDLE_TIMEOUT.defaultValue());
    }

    @Test
    void settings_useTheReferenceEnvironmentVariables() {
        assertEquals("RDMA_ALLOW_TCP_FALLBACK", TcpSettings.ALLOW_TCP_FALLBACK.envVar());
        assertEquals("RDMA_MAX_CHUNK_SIZE_MB", TcpSettings.MAX_CHUNK_MIB.envVar());
        assertEquals("RDMA_TCP_FALLBACK_PARALLELISM", TcpSettings.PARALLELISM.envVar());
    }

    @Test
    void maxChunkMiB_zero_rejectedNamingTheSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TcpSettings.MAX_CHUNK_MIB.parse("0", "test"));

        assertTrue(e.getMessage().contains("rdma.tcp.maxChunkMiB"), e.getMessage());
    }

    @Test
    void maxChunkMiB_aboveOneGiB_rejected() {
        assertEquals(1024, TcpSettings.MAX_CHUNK_MIB.parse("1024", "test"));
        assertThrows(IllegalArgumentException.class, () -> TcpSettings.MAX_CHUNK_MIB.parse("1025", "test"));
    }

    @Test
    void parallelism_outside1To64_rejected() {
        assertThrows(IllegalArgumentException.class, () -> TcpSettings.PARALLELISM.parse("0", "test"));
        assertThrows(IllegalArgumentException.class, () -> TcpSettings.PARALLELISM.parse("65", "test"));
        assertEquals(64, TcpSettings.PARALLELISM.parse("64", "test"));
    }

    @Test
    void availability_fallbackDisallowed_unavailableSayingWhy() {
        Availability a = new TcpTransportProvider().availability(settings(Map.of(TcpSettings.ALLOW_TCP_FALLBACK, false)));

        assertFalse(a.isAvailable());
        assertEquals("disabled by rdma.allowTcpFallback=false", a.reason());
    }

    @Test
    void availability_byDefault_available() {
        assertTrue(new TcpTransportProvider().availability(settings(Map.of())).isAvailable());
    }

    @Test
    void managerBuild_chunkSizeZero_failsNamingTheSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaManager.newBuilder().isolated().set("rdma.tcp.maxChunkMiB", "0").build().close());

        assertTrue(e.getMessage().contains("rdma.tcp.maxChunkMiB"), e.getMessage());
    }

    @Test
    void managerBuild_tcpDisabled_failsWithTheReason() {
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class,
                () -> RdmaManager.newBuilder().isolated().set("rdma.allowTcpFallback", "false").build().close());

        assertTrue(e.getMessage().contains("disabled by rdma.allowTcpFallback=false"), e.getMessage());
    }

    /** Settings answering from {@code values}, else the default. */
    private static Settings settings(Map<Setting<?>, Object> values) {
        return new Settings() {
            @Override
            @SuppressWarnings("unchecked")
            public <T> T get(Setting<T> setting) {
                return values.containsKey(setting) ? (T) values.get(setting) : setting.defaultValue();
            }
        };
    }
}
