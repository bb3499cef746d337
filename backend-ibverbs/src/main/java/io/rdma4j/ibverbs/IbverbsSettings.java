package io.rdma4j.ibverbs;

import io.rdma4j.spi.Setting;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The settings the ibverbs transport reads. Each is resolved by the manager (builder, then system
 * property, then environment variable, then default) and validated when a manager starts, even
 * where ibverbs ends up unused: a malformed value fails the start instead of being masked by the
 * TCP fallback. A malformed value fails with an {@link IllegalArgumentException} whose message
 * names the key, the environment variable, the source and the offending value
 * ({@link Setting#parse}).
 */
public final class IbverbsSettings {

    /**
     * {@code rdma.disableIbverbs} / {@code RDMA_DISABLE_IBVERBS}, boolean, default {@code false}:
     * hides the ibverbs transport even where RDMA hardware exists, which forces the fallback.
     */
    public static final Setting<Boolean> DISABLE = Setting.bool(
            "rdma.disableIbverbs", "RDMA_DISABLE_IBVERBS", false,
            "Hides the ibverbs transport even where RDMA hardware exists (forces the fallback transport).");

    /**
     * {@code rdma.ibverbs.target} / {@code RDMA_IBVERBS_TARGET}, default {@code ""}: the device
     * target of managers that name none themselves, written {@code cpu:<numa>},
     * {@code gpu:<ordinal>} or {@code nic:<name>} ({@link DeviceTarget#parseConfigured}). The value
     * is trimmed; empty means automatic selection ({@link Optional#empty()}).
     */
    public static final Setting<Optional<DeviceTarget>> TARGET = Setting.of(
            "rdma.ibverbs.target", "RDMA_IBVERBS_TARGET", "",
            "Default device target (cpu:<numa>, gpu:<ordinal> or nic:<name>); empty selects automatically.",
            DeviceTarget::parseConfigured);

    /**
     * {@code rdma.ibverbs.peerAffinity} / {@code RDMA_PEER_DEVICE_AFFINITY}, default {@code ""}
     * (any): which local NIC may talk to which remote NIC ({@link PeerAffinity#parse}). A token
     * naming a remote NIC the chosen local NIC may not pair with is routed to the next transport.
     */
    public static final Setting<PeerAffinity> PEER_AFFINITY = Setting.of(
            "rdma.ibverbs.peerAffinity", "RDMA_PEER_DEVICE_AFFINITY", "",
            "NIC pairing policy: '' or any, match_name, or groups:a,b|c,d.",
            PeerAffinity::parse);

    /**
     * {@code rdma.qpInitTimeout} / {@code RDMA_QP_INIT_TIMEOUT}, duration, default {@code 30s}:
     * how long an active queue pair waits for its peer's handshake reply.
     */
    public static final Setting<Duration> QP_INIT_TIMEOUT = Setting.duration(
            "rdma.qpInitTimeout", "RDMA_QP_INIT_TIMEOUT", Duration.ofSeconds(30),
            "How long an active queue pair waits for its peer's handshake reply.");

    private static final List<Setting<?>> ALL = List.of(DISABLE, TARGET, PEER_AFFINITY, QP_INIT_TIMEOUT);

    private IbverbsSettings() {
    }

    /**
     * Every setting above.
     *
     * @return the settings in declaration order; immutable
     */
    public static List<Setting<?>> all() {
        return ALL;
    }
}
