package io.rdma4j.ibverbs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keys, environment variables, defaults and error texts of the ibverbs settings (spec §10.1). */
class IbverbsSettingsTest {

    @Test
    void all_keysAndEnvironmentVariables_asDocumented() {
        assertAll(
                () -> assertEquals(List.of(IbverbsSettings.DISABLE, IbverbsSettings.TARGET,
                        IbverbsSettings.PEER_AFFINITY, IbverbsSettings.QP_INIT_TIMEOUT), IbverbsSettings.all()),
                () -> assertEquals("rdma.disableIbverbs", IbverbsSettings.DISABLE.key()),
                () -> assertEquals("RDMA_DISABLE_IBVERBS", IbverbsSettings.DISABLE.envVar()),
                () -> assertEquals("rdma.ibverbs.target", IbverbsSettings.TARGET.key()),
                () -> assertEquals("RDMA_IBVERBS_TARGET", IbverbsSettings.TARGET.envVar()),
                () -> assertEquals("rdma.ibverbs.peerAffinity", IbverbsSettings.PEER_AFFINITY.key()),
                () -> assertEquals("RDMA_PEER_DEVICE_AFFINITY", IbverbsSettings.PEER_AFFINITY.envVar()),
                () -> assertEquals("rdma.qpInitTimeout", IbverbsSettings.QP_INIT_TIMEOUT.key()),
                () -> assertEquals("RDMA_QP_INIT_TIMEOUT", IbverbsSettings.QP_INIT_TIMEOUT.envVar()));
    }

    @Test
    void defaultValue_each_asDocumented() {
        assertAll(
                () -> assertEquals(false, IbverbsSettings.DISABLE.defaultValue()),
                () -> assertEquals(Optional.empty(), IbverbsSettings.TARGET.defaultValue()),
                () -> assertEquals(PeerAffinity.any(), IbverbsSettings.PEER_AFFINITY.defaultValue()),
                () -> assertEquals(Duration.ofSeconds(30), IbverbsSettings.QP_INIT_TIMEOUT.defaultValue()));
    }

    @Test
    void target_paddedValue_parsedTrimmed() {
        assertEquals(Optional.of(DeviceTarget.nic("mlx5_1")), IbverbsSettings.TARGET.parse("  nic:mlx5_1  ", "test"));
    }

    @Test
    void target_malformed_messageNamesTheSettingAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IbverbsSettings.TARGET.parse("mlx5_1", "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_IBVERBS_TARGET"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("rdma.ibverbs.target"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'mlx5_1'"), e.getMessage()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5_0", "groups:", "groups:mlx5_0,mlx5_1|mlx5_1,mlx5_2"})
    void peerAffinity_malformed_messageNamesTheSettingAndValue(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> IbverbsSettings.PEER_AFFINITY.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_PEER_DEVICE_AFFINITY"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()));
    }

    @Test
    void disable_booleanSpellings_parsed() {
        assertAll(
                () -> assertEquals(true, IbverbsSettings.DISABLE.parse("yes", "test")),
                () -> assertEquals(false, IbverbsSettings.DISABLE.parse("0", "test")),
                () -> assertThrows(IllegalArgumentException.class, () -> IbverbsSettings.DISABLE.parse("maybe", "test")));
    }

    @Test
    void qpInitTimeout_human_parsed() {
        assertEquals(Duration.ofMillis(1500), IbverbsSettings.QP_INIT_TIMEOUT.parse("1500ms", "test"));
    }
}
