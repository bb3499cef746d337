package io.rdma4j.ibverbs;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.Watchdog;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The holder side's liveness sweep, the counterpart of {@link PassiveSweep}: once per {@code
 * rdma.ibverbs.peerCheckInterval}, asks each owner manager incarnation this transport keeps queue
 * pairs (or a remembered failed handshake) for, and whose queue pairs no op asked for within the
 * last interval, whether it is still there ({@link VerbsWire.Probe} over the control channel to the
 * owner's endpoint, naming that incarnation). The owner's queue pairs leave service ({@link
 * VerbsPeers#retireOwner}: each is destroyed once drained, and the failed handshake is forgotten)
 * only on proof that it is gone, as {@link PassiveSweep#goneBecause} judges: its endpoint is
 * unreachable, or another incarnation answers there. A timeout, an error or a garbled answer is no
 * proof: the queue pairs stay and the owner is asked again next round.
 *
 * <p>Unlike the passive side, an unreachable endpoint needs no earlier answer to count: the
 * endpoint is the owner's own, from its token, and the handshake reached it there (an owner that
 * was never reached has no queue pairs here, only a failed handshake, which then goes too: a later
 * op to it handshakes once more and fails as the first did).
 *
 * <p>Rounds run on the manager's {@link Watchdog} as {@link PassiveSweep}'s do: a round starts its
 * probes, all at once, each bounded by {@link PassiveSweep#MAX_PROBE_WAIT} (shorter when the
 * interval is), and the next round is planned one interval after the last probe of this one ended,
 * while this side keeps queue pairs to any owner; a new owner ({@link #ownerAdded}) plans the first.
 * {@link #close} stops planning and waits for nothing; a probe answered after close changes nothing
 * (closed {@link VerbsPeers} retire nothing).
 *
 * <p>Thread-safe.
 */
final class ActiveSweep implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ActiveSweep.class.getName());

    /** One owner manager incarnation at its endpoint. */
    record Owner(Endpoint endpoint, String incarnation) {
    }

    private final TransportContext context;
    private final VerbsPeers peers;
    private final long intervalNanos;
    private final Duration probeWait;
    /** The planned round, or null; guarded by {@code this}. */
    private Watchdog.Guard next;
    /** A round's probes are under way (or its next round is being planned); guarded by {@code this}. */
    private boolean sweeping;
    private boolean closed;

    /** @param interval time between rounds; {@link Duration#ZERO} turns the sweep off */
    ActiveSweep(TransportContext context, VerbsPeers peers, Duration interval) {
        this.context = context;
        this.peers = peers;
        this.intervalNanos = interval.toNanos();
        this.probeWait = interval.compareTo(PassiveSweep.MAX_PROBE_WAIT) < 0 ? interval : PassiveSweep.MAX_PROBE_WAIT;
    }

    /** This side began to keep queue pairs to an owner: plans a round one interval from now, unless one is planned or under way. */
    synchronized void ownerAdded() {
        if (intervalNanos != 0 && !closed && next == null && !sweeping) {
            next = context.watchdog().arm(intervalNanos, this::round);
        }
    }

    /** One round, on the watchdog's thread: starts the probes (the control channel runs them) and returns. */
    private void round() {
        synchronized (this) {
            if (closed || sweeping) {       // sweeping: fired at once by a closed watchdog while the next round was planned
                return;
            }
            next = null;
            sweeping = true;
        }
        CompletableFuture<?>[] probes = new CompletableFuture<?>[0];
        try {
            probes = peers.quietOwners(intervalNanos).stream().map(this::probe).toArray(CompletableFuture<?>[]::new);
        } finally {
            CompletableFuture.allOf(probes).whenComplete((ok, t) -> roundEnded());
        }
    }

    /** Plans the next round while this side keeps queue pairs to any owner. */
    private synchronized void roundEnded() {
        if (!closed && peers.owners() > 0) {
            next = context.watchdog().arm(intervalNanos, this::round);
        }
        sweeping = false;
    }

    private CompletableFuture<Void> probe(Owner owner) {
        CompletableFuture<byte[]> answer;
        try {
            answer = context.control().request(owner.endpoint(), new VerbsWire.Probe(owner.incarnation()).encode(),
                    Deadline.after(probeWait, context.clock()));
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        return answer.handle((reply, t) -> {
            String gone = PassiveSweep.goneBecause(owner.incarnation(), reply, t);
            if (gone != null) {
                int retired = peers.retireOwner(owner, "the owner manager is gone (" + gone + ")");
                if (retired >= 0) {     // none: only a failed handshake was remembered for it (an op since it was found gone)
                    LOG.log(retired > 0 ? System.Logger.Level.INFO : System.Logger.Level.DEBUG, "owner manager incarnation {0} "
                            + "at {1} is gone ({2}): its {3} queue pair(s) leave service", owner.incarnation(), owner.endpoint(),
                            gone, retired);
                }
            } else if (t != null) {
                LOG.log(System.Logger.Level.DEBUG, "owner manager incarnation {0} at {1} did not answer the liveness probe "
                        + "({2}): its queue pairs stay, and it is asked again next round", owner.incarnation(),
                        owner.endpoint(), VerbsPeers.failure(t).getMessage());
            }
            return null;
        });
    }

    /**
     * The owners whose queue pairs are all quiet: no op asked for any of them within the last
     * {@code quietNanos}.
     *
     * @param lastUses each group of queue pairs: its owner, and when an op last asked for one of them
     * @param now      the current time, on the same clock
     * @return each quiet owner once, in the order first met
     */
    static List<Owner> quiet(List<Map.Entry<Owner, Long>> lastUses, long now, long quietNanos) {
        Map<Owner, Boolean> quiet = new LinkedHashMap<>();
        for (Map.Entry<Owner, Long> e : lastUses) {
            boolean q = now - e.getValue() >= quietNanos;
            quiet.merge(e.getKey(), q, Boolean::logicalAnd);
        }
        List<Owner> owners = new ArrayList<>();
        quiet.forEach((o, q) -> {
            if (q) {
                owners.add(o);
            }
        });
        return owners;
    }

    /** Stops planning rounds; waits for nothing (probes under way end by their deadline and change nothing). Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        if (next != null) {
            next.disarm();
            next = null;
        }
    }
}
