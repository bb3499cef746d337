package io.rdma4j.transport.ibverbs.liveness;

import io.rdma4j.transport.ibverbs.VerbsTransport;
import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The holder side's liveness sweep, the counterpart of {@link OwnerSweep}: once per {@code
 * rdma.ibverbs.peerCheckInterval}, asks each owner manager incarnation this transport keeps queue
 * pairs (or a remembered failed handshake) for, and whose queue pairs no op asked for within the
 * last interval, whether it is still there ({@link VerbsWire.Probe} over the control channel to the
 * owner's endpoint, naming that incarnation). The owner's queue pairs leave service ({@link
 * HolderQueuePairs#retireOwner}: each is destroyed once drained, and the failed handshake is forgotten)
 * only on proof that it is gone, as {@link OwnerSweep#goneBecause} judges: its endpoint is
 * unreachable, or another incarnation answers there; or once it has left every probe unanswered
 * (timed out, failed) for {@code rdma.ibverbs.peerSilenceLimit} ({@link PeerSilence}: a stopped
 * process, a host gone without a reset). A single timeout, an error or a garbled answer is no
 * proof: the queue pairs stay and the owner is asked again next round.
 *
 * <p>Unlike the owner side, an unreachable endpoint needs no earlier answer to count: the
 * endpoint is the owner's own, from its token, and the handshake reached it there (an owner that
 * was never reached has no queue pairs here, only a failed handshake, which then goes too: a later
 * op to it handshakes once more and fails as the first did).
 *
 * <p>Rounds ({@link SweepRounds}) go on while this side keeps queue pairs to any owner; a new owner
 * ({@link #ownerAdded}) plans the first.
 * {@link #close} stops planning and waits for nothing; a probe answered after close changes nothing
 * (closed {@link HolderQueuePairs} retire nothing).
 *
 * <p>Thread-safe.
 */
public final class HolderSweep implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(HolderSweep.class.getName());

    /** One owner manager incarnation at its endpoint. */
    public record Owner(Endpoint endpoint, String incarnation) {
    }

    private final TransportContext context;
    private final HolderQueuePairs peers;
    private final SweepRounds rounds;
    private final PeerSilence<Owner> silence;

    /**
     * @param interval     time between rounds; {@link Duration#ZERO} turns the sweep off
     * @param silenceLimit how long an owner may leave its probes unanswered before it counts as gone; zero: for ever
     */
    public HolderSweep(TransportContext context, HolderQueuePairs peers, Duration interval, Duration silenceLimit) {
        this.context = context;
        this.peers = peers;
        this.silence = new PeerSilence<>(silenceLimit);
        this.rounds = new SweepRounds(context, interval, () -> {
            List<Owner> quiet = peers.quietOwners(interval.toNanos());
            silence.retainOnly(quiet);
            return quiet.stream().<CompletableFuture<?>>map(this::probe).toList();
        }, () -> peers.owners() > 0);
    }

    /** This side began to keep queue pairs to an owner: plans a round one interval from now, unless one is planned or under way. */
    public void ownerAdded() {
        rounds.plan();
    }

    private CompletableFuture<Void> probe(Owner owner) {
        return rounds.probe(owner.endpoint(), owner.incarnation()).handle((reply, t) -> {
            String gone = OwnerSweep.goneBecause(owner.incarnation(), reply, t);
            if (gone == null && t != null) {
                gone = silence.unanswered(owner, context.clock().nanoTime());
            }
            if (gone != null || t == null) {
                silence.answered(owner);
            }
            if (gone != null) {
                int retired = peers.retireOwner(owner, "the owner manager is gone (" + gone + ")");
                if (retired >= 0) {     // none: only a failed handshake was remembered for it (an op since it was found gone)
                    LOG.log(retired > 0 ? System.Logger.Level.INFO : System.Logger.Level.DEBUG, "owner manager incarnation {0} "
                            + "at {1} is gone ({2}): its {3} queue pair(s) leave service", owner.incarnation(), owner.endpoint(),
                            gone, retired);
                }
            } else if (t != null) {
                LOG.log(System.Logger.Level.DEBUG, "owner manager incarnation {0} at {1} did not answer the liveness probe "
                        + "({2}): its queue pairs stay unless it stays silent for rdma.ibverbs.peerSilenceLimit, and it is "
                        + "asked again next round", owner.incarnation(), owner.endpoint(), VerbsTransport.failure(t).getMessage());
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
    public static List<Owner> quiet(List<Map.Entry<Owner, Long>> lastUses, long now, long quietNanos) {
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
    /** Rounds whose probes all ended so far (for tests). */
    public long roundsEnded() {
        return rounds.roundsEnded();
    }

    @Override
    public void close() {
        rounds.close();
    }
}
