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

    /**
     * {@code rdma.ibverbs.queueDepth} / {@code RDMA_IBVERBS_QUEUE_DEPTH}, 1..4096, default {@code 128}:
     * work requests one queue pair keeps in flight; more wait in the transport until completions
     * free room.
     */
    public static final Setting<Integer> QUEUE_DEPTH = Setting.integer(
            "rdma.ibverbs.queueDepth", "RDMA_IBVERBS_QUEUE_DEPTH", 128, 1, 4096,
            "Work requests one queue pair keeps in flight (1..4096); more wait for completions.");

    /**
     * {@code rdma.ibverbs.busyPollMicros} / {@code RDMA_IBVERBS_BUSY_POLL_US}, 0..1000000, default
     * {@code 50}: how long a device's completion poller spins on an empty completion queue before it
     * parks on the completion channel (so an idle manager burns no CPU).
     */
    public static final Setting<Integer> BUSY_POLL_MICROS = Setting.integer(
            "rdma.ibverbs.busyPollMicros", "RDMA_IBVERBS_BUSY_POLL_US", 50, 0, 1_000_000,
            "Microseconds the completion poller spins on an empty queue before it sleeps on the completion channel.");

    private static final List<Setting<?>> ALL = List.of(DISABLE, TARGET, PEER_AFFINITY, QP_INIT_TIMEOUT, QUEUE_DEPTH,
            BUSY_POLL_MICROS);

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
