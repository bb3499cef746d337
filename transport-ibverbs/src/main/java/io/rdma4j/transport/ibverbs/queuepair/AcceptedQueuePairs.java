package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.NanoClock;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The owner side's queue pairs (those a holder asked for by handshake), each serving one slot of
 * one holder manager: keyed by what the handshake names ({@link Key}). This class only keeps the
 * books: it tells the caller which queue pairs left service, and the caller destroys them.
 *
 * <ul>
 *   <li>A handshake for a key that already has a queue pair replaces it: the holder makes a new
 *       queue pair on a slot only when its old one broke (or its handshake failed), so the old
 *       accepted one serves nobody.</li>
 *   <li>A handshake from a new incarnation of a holder endpoint retires every queue pair of the
 *       endpoint's previous incarnation: one endpoint is one manager at a time, so that one is
 *       gone. Its later handshakes, if any still arrive, are refused.</li>
 *   <li>A holder that goes away for good on an endpoint nobody reuses is found by the caller's
 *       liveness sweep: {@link #quietHolders} names the holders to ask, {@link #confirmReachable}
 *       records that one answered at its endpoint (only then does its endpoint failing to answer
 *       mean something), {@link #retireGone} retires one found gone, unless it (or a successor)
 *       handshook since it was named.</li>
 * </ul>
 * A manager incarnation speaks from one endpoint (the control endpoint it advertises).
 *
 * <p>Thread-safe.
 *
 * @param <Q> the queue pair (a type parameter so that the books can be tested on their own)
 */
public final class AcceptedQueuePairs<Q> {

    /** Incarnations retired and remembered, to refuse their late handshakes; the oldest are forgotten first. */
    static final int REMEMBERED_RETIRED = 1024;

    /**
     * One slot of one holder: its manager incarnation (hex), its device, the owner incarnation it
     * addressed (a holder with a stale token addresses an earlier one and keeps separate slots for
     * it; the token check then refuses its ops), the owner's device, the slot.
     */
    public record Key(String holderIncarnation, String holderDevice, String ownerIncarnation, String ownerDevice, int slot) {
    }

    /**
     * The holder manager at {@code endpoint}, as the books last saw it: its incarnation, when it
     * last handshook (on the books' clock), which handshake that was (a number that grows with
     * every handshake, so that two are never confused), and whether it ever answered a probe at
     * {@code endpoint} (the endpoint a holder advertises need not reach it from here).
     */
    public record Holder(Endpoint endpoint, String incarnation, long handshakeNanos, long handshake, boolean reachable) {
    }

    /** An incarnation retired by its successor on the endpoint {@code at}. */
    private record Succession(Endpoint at, String successor) {
    }

    private final NanoClock clock;
    private final Map<Key, Q> live = new HashMap<>();
    /** The holder at each endpoint that has queue pairs in service: they all belong to its incarnation. */
    private final Map<Endpoint, Holder> holders = new HashMap<>();
    private final Map<String, Succession> retired = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Succession> eldest) {
            return size() > REMEMBERED_RETIRED;
        }
    };
    private long handshakes;

    /** @param clock when handshakes happen, for {@link #quietHolders} */
    AcceptedQueuePairs(NanoClock clock) {
        this.clock = clock;
    }

    /**
     * Whether a handshake from {@code incarnation} at {@code holder} may be served: not when that
     * incarnation was succeeded on its endpoint.
     *
     * @throws IllegalStateException saying which endpoint's successor retired it
     */
    synchronized void requireCurrent(Endpoint holder, String incarnation) {
        Succession s = retired.get(incarnation);
        if (s != null) {
            throw new IllegalStateException("manager incarnation " + incarnation + " at " + s.at()
                    + " was succeeded on that endpoint by " + s.successor() + ": its handshake is refused");
        }
    }

    /**
     * Records {@code queuePair} for {@code key}, asked for by the manager at {@code holder}.
     *
     * @return the queue pairs this takes out of service (the one it replaces on the key, and those of
     *         the endpoint's previous incarnation), for the caller to destroy
     * @throws IllegalStateException if {@code key}'s incarnation was already succeeded on {@code holder}
     *                               (nothing is recorded: the caller destroys {@code queuePair})
     */
    synchronized List<Q> put(Endpoint holder, Key key, Q queuePair) {
        requireCurrent(holder, key.holderIncarnation());
        List<Q> out = new ArrayList<>();
        Holder previous = holders.get(holder);
        boolean same = previous != null && previous.incarnation().equals(key.holderIncarnation());
        holders.put(holder, new Holder(holder, key.holderIncarnation(), clock.nanoTime(), ++handshakes,
                same && previous.reachable()));
        if (previous != null && !same) {
            retired.put(previous.incarnation(), new Succession(holder, key.holderIncarnation()));
            takeOutOfService(previous.incarnation(), out);
        }
        Q replaced = live.put(key, queuePair);
        if (replaced != null) {
            out.add(replaced);
        }
        return out;
    }

    /**
     * The holders whose last handshake is at least {@code quietNanos} old: those a liveness sweep
     * asks whether they are still there (one that handshook more recently showed it).
     */
    synchronized List<Holder> quietHolders(long quietNanos) {
        long now = clock.nanoTime();
        return holders.values().stream().filter(h -> now - h.handshakeNanos() >= quietNanos).toList();
    }

    /** The holder at {@code endpoint}, or null when this side keeps no queue pairs for one there. */
    synchronized Holder holderAt(Endpoint endpoint) {
        return holders.get(endpoint);
    }

    /**
     * Records that {@code holder}'s incarnation answered a probe at its endpoint: from now on, its
     * endpoint failing to answer, or another incarnation answering there, proves it gone. Nothing
     * when another incarnation is there now.
     */
    synchronized void confirmReachable(Holder holder) {
        holders.computeIfPresent(holder.endpoint(), (e, h) -> h.incarnation().equals(holder.incarnation()) && !h.reachable()
                ? new Holder(e, h.incarnation(), h.handshakeNanos(), h.handshake(), true) : h);
    }

    /**
     * Takes the queue pairs of {@code gone} (as {@link #quietHolders} named it) out of service,
     * unless a handshake came from its endpoint since (then the answer that found it gone is stale:
     * the same incarnation handshook again, or a successor did and retired it already), or it never
     * answered at its endpoint ({@link #confirmReachable}: then its endpoint failing proves nothing
     * about it). A holder retired here is not refused later: if it was there after all, its next
     * handshake is served.
     *
     * @return the queue pairs this takes out of service, for the caller to destroy; empty when stale,
     *         never confirmed reachable, or already retired
     */
    synchronized List<Q> retireGone(Holder gone) {
        List<Q> out = new ArrayList<>();
        Holder now = holders.get(gone.endpoint());
        if (now != null && now.handshake() == gone.handshake() && now.reachable()) {
            holders.remove(gone.endpoint());
            takeOutOfService(gone.incarnation(), out);
        }
        return out;
    }

    private void takeOutOfService(String holderIncarnation, List<Q> out) {
        live.entrySet().removeIf(e -> {
            if (e.getKey().holderIncarnation().equals(holderIncarnation)) {
                out.add(e.getValue());
                return true;
            }
            return false;
        });
    }

    /** The holders that answered a probe at their endpoint ({@link #confirmReachable}), of those with queue pairs in service. */
    synchronized int reachableHolders() {
        return (int) holders.values().stream().filter(Holder::reachable).count();
    }

    /** The queue pairs in service now. */
    synchronized int size() {
        return live.size();
    }

    /** Takes every queue pair out of service (the transport closes) and returns them, for the caller to destroy. */
    synchronized List<Q> clear() {
        List<Q> all = new ArrayList<>(live.values());
        live.clear();
        holders.clear();
        return all;
    }
}
