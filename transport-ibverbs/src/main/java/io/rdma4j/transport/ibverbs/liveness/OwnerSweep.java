package io.rdma4j.transport.ibverbs.liveness;

import io.rdma4j.transport.ibverbs.VerbsTransport;
import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.transport.ibverbs.queuepair.AcceptedQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.OwnerQueuePairs;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The owner side's liveness sweep: once per {@code rdma.ibverbs.peerCheckInterval}, asks each
 * holder manager this transport keeps accepted queue pairs for, and that did not handshake within
 * the last interval, whether it is still there ({@link VerbsWire.Probe} over the control channel,
 * naming the incarnation the books hold for its endpoint). A new holder is also asked right after
 * its handshakes, until it answered once: whether the control endpoint it advertises reaches it
 * from here (nothing else needs it to: a holder only ever connects to its owners). Only for a holder that
 * answered once are its queue pairs destroyed ({@link OwnerQueuePairs#retireGone}), and only on proof
 * that it is gone:
 * <ul>
 *   <li>its endpoint is unreachable ({@link TransportException.Kind#PEER_UNREACHABLE}: nothing
 *       listens there, the connection was reset, ...);</li>
 *   <li>or another incarnation answers there (a successor that has not handshaken with this side).</li>
 * </ul>
 * Anything else is no proof, and the queue pairs stay until the next round asks again: a probe
 * that times out (a stopped or overloaded holder, or a host that vanished without a reset), a
 * garbled answer, or an error from the holder (an older rdma4j that does not know the probe, a
 * holder whose verbs transport closed). Except for a holder that answered once and has left every
 * probe since unanswered for {@code rdma.ibverbs.peerSilenceLimit} ({@link PeerSilence}): it
 * counts as gone too.
 * A holder that never answered (it advertises an endpoint this side cannot reach, such as its
 * loopback address from another host; or it went away before its first probe) keeps its queue pairs
 * until a successor handshakes from its endpoint or the owner closes.
 *
 * <p>Rounds ({@link SweepRounds}) go on while this side keeps accepted queue pairs: a handshake from
 * a holder ({@link #holderArrived}) plans the first. {@link #close} stops planning and waits for
 * nothing; a probe answered after close changes nothing (closed {@link OwnerQueuePairs} retire nothing).
 *
 * <p>Thread-safe.
 */
public final class OwnerSweep implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(OwnerSweep.class.getName());

    /** A holder incarnation at its endpoint: what stays the same across the books' snapshots of it. */
    private record HolderId(Endpoint endpoint, String incarnation) {
        static HolderId of(AcceptedQueuePairs.Holder h) {
            return new HolderId(h.endpoint(), h.incarnation());
        }
    }

    private final TransportContext context;
    private final OwnerQueuePairs peers;
    private final SweepRounds rounds;
    private final PeerSilence<HolderId> silence;
    private final AtomicLong unanswered = new AtomicLong();
    /** Endpoints of new holders asked at once whose answer has not come yet. */
    private final Set<Endpoint> confirming = ConcurrentHashMap.newKeySet();

    /**
     * @param interval     time between rounds; {@link Duration#ZERO} turns the sweep off
     * @param silenceLimit how long a holder that answered once may leave its probes unanswered before it counts as gone;
     *                     zero: for ever
     */
    public OwnerSweep(TransportContext context, OwnerQueuePairs peers, Duration interval, Duration silenceLimit) {
        this.context = context;
        this.peers = peers;
        this.silence = new PeerSilence<>(silenceLimit);
        this.rounds = new SweepRounds(context, interval, () -> {
            List<AcceptedQueuePairs.Holder> quiet = peers.quietHolders(interval.toNanos());
            silence.retainOnly(quiet.stream().map(HolderId::of).toList());
            return quiet.stream().<CompletableFuture<?>>map(this::probe).toList();
        }, () -> peers.acceptedQueuePairs() > 0);
    }

    /**
     * The holder at {@code from} handshook: asks it at once when it never answered a probe (unless
     * such a probe is under way), and plans a round one interval from now, unless one is planned or
     * under way. Nothing when the sweep is off or closed.
     */
    public void holderArrived(Endpoint from) {
        if (!rounds.plan()) {
            return;
        }
        AcceptedQueuePairs.Holder h = peers.holderAt(from);
        if (h != null && !h.reachable() && confirming.add(from)) {
            probe(h).whenComplete((ok, t) -> confirming.remove(from));
        }
    }

    private CompletableFuture<Void> probe(AcceptedQueuePairs.Holder holder) {
        return rounds.probe(holder.endpoint(), holder.incarnation()).handle((reply, t) -> {
            String gone = goneBecause(holder.incarnation(), reply, t);
            if (gone == null && t != null && holder.reachable()) {
                gone = silence.unanswered(HolderId.of(holder), context.clock().nanoTime());
            }
            if (gone != null || t == null) {
                silence.answered(HolderId.of(holder));
            }
            if (t == null && holder.incarnation().equals(answeredBy(reply))) {
                peers.confirmReachable(holder);
            } else if (gone != null) {
                if (!holder.reachable()) {
                    LOG.log(System.Logger.Level.DEBUG, "holder manager incarnation {0} at {1} never answered there, so {2} "
                            + "proves nothing: its accepted queue pairs stay", holder.incarnation(), holder.endpoint(), gone);
                }
                peers.retireGone(holder, gone);
            } else if (t != null) {
                LOG.log(System.Logger.Level.DEBUG, "holder manager incarnation {0} at {1} did not answer the liveness probe "
                        + "({2}): its accepted queue pairs stay unless it stays silent for rdma.ibverbs.peerSilenceLimit, and it "
                        + "is asked again next round", holder.incarnation(),
                        holder.endpoint(), VerbsTransport.failure(t).getMessage());
            }
            if (t != null) {
                unanswered.incrementAndGet();
            }
            return null;
        });
    }

    /**
     * Whether a probe's outcome proves the holder manager gone.
     *
     * @param believed the incarnation the probe named
     * @param reply    the answer, when {@code failure} is null
     * @param failure  why there is no answer, or null
     * @return why the holder is gone, or null when the outcome is no proof (see the class comment)
     */
    static String goneBecause(String believed, byte[] reply, Throwable failure) {
        if (failure != null) {
            TransportException e = VerbsTransport.failure(failure);
            return e.kind() == TransportException.Kind.PEER_UNREACHABLE ? "unreachable: " + e.getMessage() : null;
        }
        String there = answeredBy(reply);
        return there == null || there.equals(believed) ? null : "incarnation " + there + " answers at its endpoint now";
    }

    /** The incarnation a probe's {@code reply} names, or null when the reply is garbled. */
    static String answeredBy(byte[] reply) {
        try {
            return VerbsWire.Probe.decodeMessage(reply).incarnation();
        } catch (TransportException e) {
            return null;
        }
    }

    /** Probes that ended without an answer (failed, or timed out), counted once what they proved was acted on (for tests). */
    public long unansweredProbes() {
        return unanswered.get();
    }

    /** Rounds whose probes all ended so far (for tests). */
    public long roundsEnded() {
        return rounds.roundsEnded();
    }

    /** Stops planning rounds; waits for nothing (probes under way end by their deadline and change nothing). Idempotent. */
    @Override
    public void close() {
        rounds.close();
    }
}
