package io.rdma4j.transport.ibverbs.liveness;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How long each peer of a liveness sweep ({@link HolderSweep}, {@link OwnerSweep}) has left its
 * probes unanswered, against {@code rdma.ibverbs.peerSilenceLimit}. A probe that times out or
 * fails without proving the peer gone (a stopped JVM, an overloaded one, a host that vanished
 * without a reset) starts the peer's silence, an answer ends it; a peer silent for the limit or
 * longer counts as gone, so that its queue pairs do not stay for ever. A peer the sweep no longer
 * asks (an op used its queue pairs since, or they went) is forgotten at the next round.
 *
 * <p>Thread-safe.
 *
 * @param <P> the peer: an owner incarnation, or a holder
 */
final class PeerSilence<P> {

    private final long limitNanos;
    /** Per silent peer, when the first of its unanswered probes ended (clock nanos). */
    private final Map<P, Long> since = new ConcurrentHashMap<>();

    /** @param limit how long a peer may stay silent; {@link Duration#ZERO}: for ever (silence proves nothing) */
    PeerSilence(Duration limit) {
        this.limitNanos = limit.toNanos();
    }

    /**
     * A probe of {@code peer} ended at {@code now} without an answer and without proof.
     *
     * @return why the peer counts as gone (how long it has been silent), or null while it is within the limit
     */
    String unanswered(P peer, long now) {
        if (limitNanos == 0) {
            return null;
        }
        long silent = now - since.computeIfAbsent(peer, p -> now);
        return silent >= limitNanos ? "silent: no answer to its liveness probes for " + Duration.ofNanos(silent).toMillis()
                + " ms, at least rdma.ibverbs.peerSilenceLimit (" + Duration.ofNanos(limitNanos).toMillis() + " ms)" : null;
    }

    /** {@code peer} answered (or was found gone by proof): its silence ends. */
    void answered(P peer) {
        since.remove(peer);
    }

    /** Keeps the silence of the peers a new round asks only: the others were used since, or went. */
    void retainOnly(Collection<P> asked) {
        since.keySet().retainAll(asked);
    }

    /** Peers silent now (for tests). */
    int silentPeers() {
        return since.size();
    }
}
