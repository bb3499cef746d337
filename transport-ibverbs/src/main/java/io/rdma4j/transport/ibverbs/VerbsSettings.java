package io.rdma4j.transport.ibverbs;

import io.rdma4j.spi.Setting;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The settings the ibverbs transport reads. Each is resolved by the manager (builder, then system
 * property, then environment variable, then default) and validated when a manager starts, even
 * where ibverbs ends up unused: a malformed value fails the start instead of being masked by the
 * TCP fallback. A malformed value fails with an {@link IllegalArgumentException} whose message
 * names the key, the environment variable, the source and the offending value
 * ({@link Setting#parse}).
 */
public final class VerbsSettings {

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
     * is trimmed; empty means automatic selection ({@link Optional#empty()}). {@code gpu:<n>}
     * chooses the devices closest to the n-th GPU (NVIDIA or AMD, in PCI address order) in the
     * host's PCI tree, and fails the transport's start naming the GPUs found when there is no
     * such GPU.
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
     * {@code rdma.ibverbs.busyPollWindow} / {@code RDMA_CQ_BUSY_POLL_WINDOW}, default {@code 50us}:
     * how long a device's completion poller keeps polling an empty completion queue, after anyone
     * last took a completion from it, before it sleeps on the completion channel; also how long a
     * thread waiting for its ops ({@code join()}, {@code submitAndWait}) polls the queue itself
     * without taking a completion before it sleeps until the ops complete. A device whose ops
     * typically take longer than half this window (a slow fabric such as soft-RoCE) is polled for
     * twice their typical time instead, at most 1 ms, unless they typically take longer than 1 ms;
     * {@code 0} turns that off too. Written {@code 0} (sleep at once), {@code <n>us},
     * {@code <n>ms} or {@code <n>s}; at most one second.
     */
    public static final Setting<Duration> BUSY_POLL_WINDOW = Setting.of(
            "rdma.ibverbs.busyPollWindow", "RDMA_CQ_BUSY_POLL_WINDOW", "50us",
            "How long the completion poller, and a thread waiting for its ops, spin on an empty completion queue before they sleep "
                    + "(0 to 1s); longer, up to 1 ms, on a device whose ops typically take longer.",
            VerbsSettings::parseBusyPoll);

    /**
     * {@code rdma.ibverbs.queueDepth} / {@code RDMA_IBVERBS_QUEUE_DEPTH}, 1 to 65536, default
     * {@code 128}: work requests (signalled or not) one queue pair keeps in flight; more wait for
     * completions. Lowered, with an INFO line, to what the device allows ({@code max_qp_wr}).
     */
    public static final Setting<Integer> QUEUE_DEPTH = Setting.integer(
            "rdma.ibverbs.queueDepth", "RDMA_IBVERBS_QUEUE_DEPTH", 128, 1, 65536,
            "Work requests one queue pair keeps in flight (1..65536; lowered to the device's max_qp_wr).");

    /**
     * {@code rdma.ibverbs.signalEvery} / {@code RDMA_IBVERBS_SIGNAL_EVERY}, 1 to 65536, default
     * {@code 16}: of the work requests a queue pair posts back to back, one in this many asks for a
     * completion ({@code IBV_SEND_SIGNALED}); so does always the last one of each action's ops posted
     * together. The completions of the others are inferred from the next signalled one, which frees
     * their send-queue slots too. {@code 1} signals every work request.
     */
    public static final Setting<Integer> SIGNAL_EVERY = Setting.integer(
            "rdma.ibverbs.signalEvery", "RDMA_IBVERBS_SIGNAL_EVERY", 16, 1, 65536,
            "One work request in this many asks for a completion, and always the last of an action's ops posted together (1..65536).");

    /**
     * {@code rdma.ibverbs.maxInlineData} / {@code RDMA_IBVERBS_MAX_INLINE_DATA}, 0 to 4096, default
     * {@code 64}: the bytes a work request may carry inline that queue pairs ask for when they are
     * created ({@code max_inline_data}). A write of at most what the driver then gave (which may be
     * more) is posted with {@code IBV_SEND_INLINE}: its bytes are copied at post time and the device
     * reads nothing of the source afterwards. {@code 0} turns that off. A device that refuses a
     * queue pair with that much gets one without inline data (INFO line).
     */
    public static final Setting<Integer> MAX_INLINE_DATA = Setting.integer(
            "rdma.ibverbs.maxInlineData", "RDMA_IBVERBS_MAX_INLINE_DATA", 64, 0, 4096,
            "Bytes of a write a queue pair may carry inline, copied when posted (0..4096; 0 off; the device may give more).");

    /**
     * {@code rdma.ibverbs.qpsPerPeer} / {@code RDMA_IBVERBS_QPS_PER_PEER}, 1 to 64, default
     * {@code 1}: reliable-connected queue pairs per (local device, peer manager, peer device),
     * each created on first use; large ops are striped across them.
     */
    public static final Setting<Integer> QPS_PER_PEER = Setting.integer(
            "rdma.ibverbs.qpsPerPeer", "RDMA_IBVERBS_QPS_PER_PEER", 1, 1, 64,
            "Queue pairs per (local device, peer manager, peer device); large ops are striped across them (1..64).");

    /**
     * {@code rdma.ibverbs.maxSge} / {@code RDMA_IBVERBS_MAX_SGE}, 1 to 64, default {@code 1}:
     * scatter/gather entries per send work request that queue pairs are created with. Lowered,
     * with an INFO line, to what the device allows ({@code max_sge}).
     */
    public static final Setting<Integer> MAX_SGE = Setting.integer(
            "rdma.ibverbs.maxSge", "RDMA_IBVERBS_MAX_SGE", 1, 1, 64,
            "Scatter/gather entries per send work request of a queue pair (1..64; lowered to the device's max_sge).");

    /**
     * {@code rdma.ibverbs.minStripeKiB} / {@code RDMA_IBVERBS_MIN_STRIPE_KB}, 1 to 1048576,
     * default {@code 512}: the smallest piece, in KiB, a large op is striped into across queue
     * pairs; an op under twice this size goes whole to one queue pair.
     */
    public static final Setting<Integer> MIN_STRIPE_KIB = Setting.integer(
            "rdma.ibverbs.minStripeKiB", "RDMA_IBVERBS_MIN_STRIPE_KB", 512, 1, 1 << 20,
            "Smallest stripe, in KiB, of an op spread across queue pairs; smaller ops use one queue pair (1..1048576).");

    /**
     * {@code rdma.ibverbs.peerCheckInterval} / {@code RDMA_IBVERBS_PEER_CHECK_INTERVAL}, default
     * {@code 30s}, {@code 0} turns it off: how often each side asks the peer managers it keeps
     * queue pairs with, and that were quiet within the last interval, whether they are still there
     * (the owner its holders, a holder its owners); the queue pairs of a peer that is gone (nothing
     * listens at its endpoint, or another manager answers there) leave service and are destroyed.
     * Written like {@link #BUSY_POLL_WINDOW} (a whole number of {@code ms}, {@code s} or {@code m},
     * ...); from 100ms to one day.
     */
    public static final Setting<Duration> PEER_CHECK_INTERVAL = Setting.of(
            "rdma.ibverbs.peerCheckInterval", "RDMA_IBVERBS_PEER_CHECK_INTERVAL", "30s",
            "How often each side asks the peers it keeps queue pairs with whether they are still there "
                    + "(0 off, else 100ms to 1 day).",
            VerbsSettings::parsePeerCheck);

    /**
     * {@code rdma.ibverbs.peerSilenceLimit} / {@code RDMA_IBVERBS_PEER_SILENCE_LIMIT}, default
     * {@code 10m}, {@code 0} for never: how long a peer may leave the liveness probes of {@link
     * #PEER_CHECK_INTERVAL} unanswered (they time out, or fail without proving it gone) before it
     * counts as gone and its queue pairs leave service, as on proof. Such a peer is a stopped or
     * hung process, or a host that vanished without resetting its connections; one only slow to
     * answer for longer than this loses its queue pairs too, and its later ops connect anew. A
     * holder that never answered a probe keeps its queue pairs regardless (its endpoint may just be
     * unreachable from the owner). Written like {@link #PEER_CHECK_INTERVAL}; from 1s to one day.
     */
    public static final Setting<Duration> PEER_SILENCE_LIMIT = Setting.of(
            "rdma.ibverbs.peerSilenceLimit", "RDMA_IBVERBS_PEER_SILENCE_LIMIT", "10m",
            "How long a peer may leave liveness probes unanswered before its queue pairs leave service "
                    + "(0 never, else 1s to 1 day).",
            VerbsSettings::parseSilenceLimit);

    private static final Duration MAX_BUSY_POLL = Duration.ofSeconds(1);
    private static final Duration MIN_PEER_CHECK = Duration.ofMillis(100);
    private static final Duration MAX_PEER_CHECK = Duration.ofDays(1);

    private static final List<Setting<?>> ALL = List.of(DISABLE, TARGET, PEER_AFFINITY, QP_INIT_TIMEOUT,
            BUSY_POLL_WINDOW, QUEUE_DEPTH, SIGNAL_EVERY, MAX_INLINE_DATA, QPS_PER_PEER, MAX_SGE, MIN_STRIPE_KIB, PEER_CHECK_INTERVAL, PEER_SILENCE_LIMIT);

    private VerbsSettings() {
    }

    private static Duration parseBusyPoll(String text) {
        Duration d = wholeDuration(text, "busy-poll window", "50us");
        if (d.compareTo(MAX_BUSY_POLL) > 0) {
            throw new IllegalArgumentException("must be at most 1s (a longer spin only burns CPU)");
        }
        return d;
    }

    private static Duration parsePeerCheck(String text) {
        Duration d = wholeDuration(text, "check interval", "30s");
        if (!d.isZero() && (d.compareTo(MIN_PEER_CHECK) < 0 || d.compareTo(MAX_PEER_CHECK) > 0)) {
            throw new IllegalArgumentException("must be 0 (off), or from 100ms to 1 day (1440m)");
        }
        return d;
    }

    private static Duration parseSilenceLimit(String text) {
        Duration d = wholeDuration(text, "silence limit", "10m");
        if (!d.isZero() && (d.compareTo(Duration.ofSeconds(1)) < 0 || d.compareTo(MAX_PEER_CHECK) > 0)) {
            throw new IllegalArgumentException("must be 0 (never), or from 1s to 1 day (1440m)");
        }
        return d;
    }

    /** {@code 0}, or a whole number (at most 9 digits) of us, ms, s or m; {@code what} and {@code example} go into the errors. */
    private static Duration wholeDuration(String text, String what, String example) {
        String t = text.toLowerCase(Locale.ROOT);
        int unitAt = 0;
        while (unitAt < t.length() && t.charAt(unitAt) >= '0' && t.charAt(unitAt) <= '9') {
            unitAt++;
        }
        String unit = t.substring(unitAt).trim();
        if (unitAt == 0 || unitAt > 9) {
            throw new IllegalArgumentException("not a " + what + " (0, or a whole number of us, ms, s or m, e.g. " + example + ")");
        }
        long n = Long.parseLong(t.substring(0, unitAt));
        if (unit.isEmpty() && n != 0) {
            throw new IllegalArgumentException("a number other than 0 needs a unit (us, ms, s or m, e.g. " + example + ")");
        }
        return switch (unit) {
            case "" -> Duration.ZERO;
            case "us", "\u00b5s" -> Duration.ofNanos(n * 1000);
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> throw new IllegalArgumentException("unknown unit '" + unit + "' (use us, ms, s or m, e.g. " + example + ")");
        };
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
