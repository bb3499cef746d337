package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.DeviceAttributes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keys, environment variables, defaults and error texts of the ibverbs settings (spec §10.1). */
class VerbsSettingsTest {

    @Test
    void all_keysAndEnvironmentVariables_asDocumented() {
        assertAll(
                () -> assertEquals(List.of(VerbsSettings.DISABLE, VerbsSettings.TARGET,
                        VerbsSettings.PEER_AFFINITY, VerbsSettings.QP_INIT_TIMEOUT, VerbsSettings.BUSY_POLL_WINDOW,
                        VerbsSettings.QUEUE_DEPTH, VerbsSettings.SIGNAL_EVERY, VerbsSettings.MAX_INLINE_DATA,
                        VerbsSettings.QPS_PER_PEER, VerbsSettings.MAX_SGE, VerbsSettings.MIN_STRIPE_KIB, VerbsSettings.PEER_CHECK_INTERVAL, VerbsSettings.PEER_SILENCE_LIMIT),
                        VerbsSettings.all()),
                () -> assertEquals("rdma.disableIbverbs", VerbsSettings.DISABLE.key()),
                () -> assertEquals("RDMA_DISABLE_IBVERBS", VerbsSettings.DISABLE.envVar()),
                () -> assertEquals("rdma.ibverbs.target", VerbsSettings.TARGET.key()),
                () -> assertEquals("RDMA_IBVERBS_TARGET", VerbsSettings.TARGET.envVar()),
                () -> assertEquals("rdma.ibverbs.peerAffinity", VerbsSettings.PEER_AFFINITY.key()),
                () -> assertEquals("RDMA_PEER_DEVICE_AFFINITY", VerbsSettings.PEER_AFFINITY.envVar()),
                () -> assertEquals("rdma.qpInitTimeout", VerbsSettings.QP_INIT_TIMEOUT.key()),
                () -> assertEquals("RDMA_QP_INIT_TIMEOUT", VerbsSettings.QP_INIT_TIMEOUT.envVar()),
                () -> assertEquals("rdma.ibverbs.busyPollWindow", VerbsSettings.BUSY_POLL_WINDOW.key()),
                () -> assertEquals("RDMA_CQ_BUSY_POLL_WINDOW", VerbsSettings.BUSY_POLL_WINDOW.envVar()),
                () -> assertEquals("rdma.ibverbs.queueDepth", VerbsSettings.QUEUE_DEPTH.key()),
                () -> assertEquals("RDMA_IBVERBS_QUEUE_DEPTH", VerbsSettings.QUEUE_DEPTH.envVar()),
                () -> assertEquals("rdma.ibverbs.qpsPerPeer", VerbsSettings.QPS_PER_PEER.key()),
                () -> assertEquals("RDMA_IBVERBS_QPS_PER_PEER", VerbsSettings.QPS_PER_PEER.envVar()),
                () -> assertEquals("rdma.ibverbs.maxSge", VerbsSettings.MAX_SGE.key()),
                () -> assertEquals("RDMA_IBVERBS_MAX_SGE", VerbsSettings.MAX_SGE.envVar()),
                () -> assertEquals("rdma.ibverbs.minStripeKiB", VerbsSettings.MIN_STRIPE_KIB.key()),
                () -> assertEquals("RDMA_IBVERBS_MIN_STRIPE_KB", VerbsSettings.MIN_STRIPE_KIB.envVar()),
                () -> assertEquals("rdma.ibverbs.peerCheckInterval", VerbsSettings.PEER_CHECK_INTERVAL.key()),
                () -> assertEquals("RDMA_IBVERBS_PEER_CHECK_INTERVAL", VerbsSettings.PEER_CHECK_INTERVAL.envVar()),
                () -> assertEquals("rdma.ibverbs.peerSilenceLimit", VerbsSettings.PEER_SILENCE_LIMIT.key()),
                () -> assertEquals("RDMA_IBVERBS_PEER_SILENCE_LIMIT", VerbsSettings.PEER_SILENCE_LIMIT.envVar()));
    }

    @Test
    void defaultValue_each_asDocumented() {
        assertAll(
                () -> assertEquals(false, VerbsSettings.DISABLE.defaultValue()),
                () -> assertEquals(Optional.empty(), VerbsSettings.TARGET.defaultValue()),
                () -> assertEquals(PeerAffinity.any(), VerbsSettings.PEER_AFFINITY.defaultValue()),
                () -> assertEquals(Duration.ofSeconds(30), VerbsSettings.QP_INIT_TIMEOUT.defaultValue()),
                () -> assertEquals(Duration.ofNanos(50_000), VerbsSettings.BUSY_POLL_WINDOW.defaultValue()),
                () -> assertEquals(128, VerbsSettings.QUEUE_DEPTH.defaultValue()),
                () -> assertEquals(1, VerbsSettings.QPS_PER_PEER.defaultValue()),
                () -> assertEquals(1, VerbsSettings.MAX_SGE.defaultValue()),
                () -> assertEquals(512, VerbsSettings.MIN_STRIPE_KIB.defaultValue()),
                () -> assertEquals(Duration.ofSeconds(30), VerbsSettings.PEER_CHECK_INTERVAL.defaultValue()),
                () -> assertEquals(Duration.ofMinutes(10), VerbsSettings.PEER_SILENCE_LIMIT.defaultValue()));
    }

    @Test
    void target_paddedValue_parsedTrimmed() {
        assertEquals(Optional.of(DeviceTarget.nic("mlx5_1")), VerbsSettings.TARGET.parse("  nic:mlx5_1  ", "test"));
    }

    @Test
    void target_malformed_messageNamesTheSettingAndValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.TARGET.parse("mlx5_1", "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_IBVERBS_TARGET"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("rdma.ibverbs.target"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'mlx5_1'"), e.getMessage()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"mlx5_0", "groups:", "groups:mlx5_0,mlx5_1|mlx5_1,mlx5_2"})
    void peerAffinity_malformed_messageNamesTheSettingAndValue(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.PEER_AFFINITY.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_PEER_DEVICE_AFFINITY"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()));
    }

    @Test
    void disable_booleanSpellings_parsed() {
        assertAll(
                () -> assertEquals(true, VerbsSettings.DISABLE.parse("yes", "test")),
                () -> assertEquals(false, VerbsSettings.DISABLE.parse("0", "test")),
                () -> assertThrows(IllegalArgumentException.class, () -> VerbsSettings.DISABLE.parse("maybe", "test")));
    }

    @Test
    void qpInitTimeout_human_parsed() {
        assertEquals(Duration.ofMillis(1500), VerbsSettings.QP_INIT_TIMEOUT.parse("1500ms", "test"));
    }

    @Test
    void busyPollWindow_unitsAndZero_parsed() {
        assertAll(
                () -> assertEquals(Duration.ZERO, VerbsSettings.BUSY_POLL_WINDOW.parse("0", "test")),
                () -> assertEquals(Duration.ofNanos(20_000), VerbsSettings.BUSY_POLL_WINDOW.parse(" 20us ", "test")),
                () -> assertEquals(Duration.ofNanos(20_000), VerbsSettings.BUSY_POLL_WINDOW.parse("20\u00b5s", "test")),
                () -> assertEquals(Duration.ofMillis(2), VerbsSettings.BUSY_POLL_WINDOW.parse("2ms", "test")),
                () -> assertEquals(Duration.ofSeconds(1), VerbsSettings.BUSY_POLL_WINDOW.parse("1s", "test")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "50", "-5us", "5 minutes", "2s", "1.5ms", "us", "9999999999us"})
    void busyPollWindow_malformedOrTooLong_messageNamesTheSettingAndValue(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.BUSY_POLL_WINDOW.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_CQ_BUSY_POLL_WINDOW"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("rdma.ibverbs.busyPollWindow"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()));
    }

    @Test
    void busyPollWindow_overOneSecond_sayWhy() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.BUSY_POLL_WINDOW.parse("1001ms", "test"));

        assertTrue(e.getMessage().contains("at most 1s"), e.getMessage());
    }

    @Test
    void peerCheckInterval_zeroAndUnits_parsed() {
        assertAll(
                () -> assertEquals(Duration.ZERO, VerbsSettings.PEER_CHECK_INTERVAL.parse("0", "test"), "off"),
                () -> assertEquals(Duration.ofMillis(100), VerbsSettings.PEER_CHECK_INTERVAL.parse("100ms", "test")),
                () -> assertEquals(Duration.ofSeconds(45), VerbsSettings.PEER_CHECK_INTERVAL.parse(" 45s ", "test")),
                () -> assertEquals(Duration.ofDays(1), VerbsSettings.PEER_CHECK_INTERVAL.parse("1440m", "test")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "30", "-5s", "1.5s", "30 seconds", "s", "99ms", "1441m", "9999999999s"})
    void peerCheckInterval_malformedOrOutOfRange_messageNamesTheSettingAndValue(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.PEER_CHECK_INTERVAL.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_IBVERBS_PEER_CHECK_INTERVAL"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("rdma.ibverbs.peerCheckInterval"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()));
    }

    @Test
    void peerCheckInterval_underTheMinimum_saysTheRange() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.PEER_CHECK_INTERVAL.parse("50ms", "test"));

        assertTrue(e.getMessage().contains("must be 0 (off), or from 100ms to 1 day"), e.getMessage());
    }

    @Test
    void peerSilenceLimit_zeroAndUnits_parsed() {
        assertAll(
                () -> assertEquals(Duration.ZERO, VerbsSettings.PEER_SILENCE_LIMIT.parse("0", "test"), "never"),
                () -> assertEquals(Duration.ofSeconds(1), VerbsSettings.PEER_SILENCE_LIMIT.parse("1000ms", "test")),
                () -> assertEquals(Duration.ofMinutes(10), VerbsSettings.PEER_SILENCE_LIMIT.parse(" 10m ", "test")),
                () -> assertEquals(Duration.ofDays(1), VerbsSettings.PEER_SILENCE_LIMIT.parse("1440m", "test")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10", "-5s", "999ms", "1441m", "forever"})
    void peerSilenceLimit_malformedOrOutOfRange_messageNamesTheSettingAndValue(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.PEER_SILENCE_LIMIT.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_IBVERBS_PEER_SILENCE_LIMIT"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()));
    }

    @Test
    void peerSilenceLimit_underASecond_saysTheRange() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.PEER_SILENCE_LIMIT.parse("500ms", "test"));

        assertTrue(e.getMessage().contains("must be 0 (never), or from 1s to 1 day"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "65537", "-1", "many"})
    void queueDepth_outOfRangeOrMalformed_refusedWithTheRange(String raw) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> VerbsSettings.QUEUE_DEPTH.parse(raw, "environment"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("RDMA_IBVERBS_QUEUE_DEPTH"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("'" + raw + "'"), e.getMessage()),
                () -> assertTrue(e.getMessage().contains("[1, 65536]") || e.getMessage().contains("not an integer"),
                        e.getMessage()));
    }

    @Test
    void qpsPerPeer_maxSge_minStripe_outOfRange_refusedWithTheRange() {
        assertAll(
                () -> assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> VerbsSettings.QPS_PER_PEER.parse("65", "test")).getMessage().contains("[1, 64]")),
                () -> assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> VerbsSettings.MAX_SGE.parse("0", "test")).getMessage().contains("[1, 64]")),
                () -> assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> VerbsSettings.MIN_STRIPE_KIB.parse("0", "test")).getMessage().contains("[1, 1048576]")));
    }

    @Test
    void signalEvery_andMaxInlineData_keysDefaultsAndRanges() {
        assertAll(
                () -> assertEquals("rdma.ibverbs.signalEvery", VerbsSettings.SIGNAL_EVERY.key()),
                () -> assertEquals("RDMA_IBVERBS_SIGNAL_EVERY", VerbsSettings.SIGNAL_EVERY.envVar()),
                () -> assertEquals(16, VerbsSettings.SIGNAL_EVERY.defaultValue()),
                () -> assertEquals("rdma.ibverbs.maxInlineData", VerbsSettings.MAX_INLINE_DATA.key()),
                () -> assertEquals("RDMA_IBVERBS_MAX_INLINE_DATA", VerbsSettings.MAX_INLINE_DATA.envVar()),
                () -> assertEquals(64, VerbsSettings.MAX_INLINE_DATA.defaultValue()),
                () -> assertEquals(0, VerbsSettings.MAX_INLINE_DATA.parse("0", "test")),
                () -> assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> VerbsSettings.SIGNAL_EVERY.parse("0", "test")).getMessage().contains("[1, 65536]")),
                () -> assertTrue(assertThrows(IllegalArgumentException.class,
                        () -> VerbsSettings.MAX_INLINE_DATA.parse("4097", "test")).getMessage().contains("[0, 4096]")));
    }

    @Test
    void tuning_fromSettings_signalEveryAndInlineData() {
        VerbsTuning t = VerbsTuning.of(FakeSettings.defaults().with(VerbsSettings.SIGNAL_EVERY, "4")
                .with(VerbsSettings.MAX_INLINE_DATA, "0"));

        assertAll(
                () -> assertEquals(4, t.signalEvery()),
                () -> assertEquals(0, t.maxInlineData()));
    }

    @Test
    void tuning_fromSettings_minStripeInBytes() {
        VerbsTuning t = VerbsTuning.of(FakeSettings.defaults().with(VerbsSettings.MIN_STRIPE_KIB, "64")
                .with(VerbsSettings.QPS_PER_PEER, "4").with(VerbsSettings.BUSY_POLL_WINDOW, "0"));

        assertEquals(new VerbsTuning(0, 128, 4, 1, 64 * 1024), t);
    }

    @Test
    void tuning_aboveTheDeviceLimits_isLowered_andSaysWhy() {
        DeviceAttributes limits = new DeviceAttributes("1.0", 0, 1L << 40, 0, 0, 0, 64, 1000, 4, 16, 5000, 64, 4, 16, 16, 1);
        List<String> logged = new ArrayList<>();

        VerbsTuning t = new VerbsTuning(50_000, 4096, 2, 30, 1 << 19).clampTo("rxe9", limits, 2048, logged::add);

        assertAll(
                () -> assertEquals(new VerbsTuning(50_000, 1000, 2, 4, 1 << 19), t),
                () -> assertEquals(2, logged.size(), logged::toString),
                () -> assertTrue(logged.get(0).contains("rdma.ibverbs.queueDepth=4096 is more than device rxe9 allows (max_qp_wr 1000")
                        && logged.get(0).endsWith("using 1000"), logged::toString),
                () -> assertTrue(logged.get(1).contains("rdma.ibverbs.maxSge=30") && logged.get(1).contains("max_sge 4"),
                        logged::toString));
    }

    @Test
    void tuning_withinTheDeviceLimits_isKept_andSaysNothing() {
        DeviceAttributes limits = new DeviceAttributes("1.0", 0, 1L << 40, 0, 0, 0, 64, 1000, 4, 16, 5000, 64, 4, 16, 16, 1);
        List<String> logged = new ArrayList<>();
        VerbsTuning wanted = new VerbsTuning(0, 128, 4, 4, 1 << 19);

        assertAll(
                () -> assertEquals(wanted, wanted.clampTo("rxe9", limits, 2048, logged::add)),
                () -> assertEquals(List.of(), logged));
    }
}
