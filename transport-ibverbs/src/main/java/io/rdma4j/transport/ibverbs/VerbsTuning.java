package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.DeviceAttributes;
import io.rdma4j.spi.Settings;

import java.util.function.Consumer;

/**
 * The data-path settings of one manager ({@link VerbsSettings}), as the transport uses them.
 *
 * @param busyPollNanos     how long a poller spins on an empty queue before it sleeps
 * @param queueDepth        work requests one queue pair keeps in flight
 * @param qpsPerPeer        queue pairs per (local device, peer manager, peer device)
 * @param maxSge            scatter/gather entries per work request
 * @param minStripeBytes    the smallest stripe of an op spread across queue pairs; a multiple of {@link #STRIPE_ALIGNMENT}
 * @param signalEvery       one work request in this many posted back to back asks for a completion
 * @param maxInlineData     bytes of inline data queue pairs are created with (0: none)
 */
public record VerbsTuning(long busyPollNanos, int queueDepth, int qpsPerPeer, int maxSge, long minStripeBytes,
                          int signalEvery, int maxInlineData) {

    /** With the default {@code signalEvery} and {@code maxInlineData} ({@link VerbsSettings}). */
    public VerbsTuning(long busyPollNanos, int queueDepth, int qpsPerPeer, int maxSge, long minStripeBytes) {
        this(busyPollNanos, queueDepth, qpsPerPeer, maxSge, minStripeBytes, VerbsSettings.SIGNAL_EVERY.defaultValue(),
                VerbsSettings.MAX_INLINE_DATA.defaultValue());
    }

    /** Stripe boundaries fall on multiples of this many bytes from the op's start. */
    public static final int STRIPE_ALIGNMENT = 64;

    static VerbsTuning of(Settings settings) {
        return new VerbsTuning(settings.get(VerbsSettings.BUSY_POLL_WINDOW).toNanos(),
                settings.get(VerbsSettings.QUEUE_DEPTH), settings.get(VerbsSettings.QPS_PER_PEER),
                settings.get(VerbsSettings.MAX_SGE), settings.get(VerbsSettings.MIN_STRIPE_KIB) * 1024L,
                settings.get(VerbsSettings.SIGNAL_EVERY), settings.get(VerbsSettings.MAX_INLINE_DATA));
    }

    /**
     * Entries a device's completion queue is created with (before the device's own limit): room
     * for eight queue pairs' full depth per queue pair per peer, at least 1024. More work requests
     * than it holds are never in flight at once; the rest wait for room.
     */
    int completionQueueEntries() {
        return (int) Math.min(1 << 20, Math.max(1024L, 8L * queueDepth * qpsPerPeer));
    }

    /**
     * These settings within what {@code device} allows: the queue depth at most {@code max_qp_wr}
     * and {@code cqEntries}, the SGEs at most {@code max_sge}. Tells {@code say} (an INFO log line
     * in production) what it lowered and why.
     */
    VerbsTuning clampTo(String device, DeviceAttributes limits, int cqEntries, Consumer<String> say) {
        int depth = Math.min(queueDepth, Math.min(limits.maxQpWr(), cqEntries));
        if (depth < queueDepth) {
            say.accept(VerbsSettings.QUEUE_DEPTH.key() + "=" + queueDepth + " is more than device "
                    + device + " allows (max_qp_wr " + limits.maxQpWr() + ", completion queue " + cqEntries + "): using " + depth);
        }
        int sge = Math.max(1, Math.min(maxSge, limits.maxSge()));
        if (sge < maxSge) {
            say.accept(VerbsSettings.MAX_SGE.key() + "=" + maxSge + " is more than device " + device
                    + " allows (max_sge " + limits.maxSge() + "): using " + sge);
        }
        return new VerbsTuning(busyPollNanos, depth, qpsPerPeer, sge, minStripeBytes, signalEvery, maxInlineData);
    }
}
