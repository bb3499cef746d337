package io.rdma4j.ibverbs;

import io.rdma4j.spi.Endpoint;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The passive side's queue pairs (those a holder asked for by handshake), each serving one slot of
 * one holder manager: keyed by what the handshake names ({@link Key}). This class only keeps the
 * books: it tells the caller which queue pairs left service, and the caller destroys them.
 *
 * <ul>
 *   <li>A handshake for a key that already has a queue pair replaces it: the holder makes a new
 *       queue pair on a slot only when its old one broke (or its handshake failed), so the old
 *       passive one serves nobody.</li>
 *   <li>A handshake from a new incarnation of a holder endpoint retires every queue pair of the
 *       endpoint's previous incarnation: one endpoint is one manager at a time, so that one is
 *       gone. Its later handshakes, if any still arrive, are refused.</li>
 * </ul>
 * A holder that goes away for good on an endpoint nobody reuses keeps its queue pairs here until
 * the transport closes: the passive side takes no part in the traffic and cannot see it leave.
 *
 * <p>Thread-safe.
 *
 * @param <Q> the queue pair (a type parameter so that the books can be tested on their own)
 */
final class PassiveQueuePairs<Q> {

    /** Incarnations retired and remembered, to refuse their late handshakes; the oldest are forgotten first. */
    static final int REMEMBERED_RETIRED = 1024;

    /**
     * One slot of one holder: its manager incarnation (hex), its device, the owner incarnation it
     * addressed (a holder with a stale token addresses an earlier one and keeps separate slots for
     * it; the token check then refuses its ops), the owner's device, the slot.
     */
    record Key(String holderIncarnation, String holderDevice, String ownerIncarnation, String ownerDevice, int slot) {
    }

    private final Map<Key, Q> live = new HashMap<>();
    private final Map<Endpoint, String> incarnationOf = new HashMap<>();
    private final Map<String, Endpoint> retired = new LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Endpoint> eldest) {
            return size() > REMEMBERED_RETIRED;
        }
    };

    /**
     * Whether a handshake from {@code incarnation} at {@code holder} may be served: not when that
     * incarnation was succeeded on its endpoint.
     *
     * @throws IllegalStateException saying which endpoint's successor retired it
     */
    synchronized void requireCurrent(Endpoint holder, String incarnation) {
        Endpoint at = retired.get(incarnation);
        if (at != null) {
            throw new IllegalStateException("manager incarnation " + incarnation + " at " + at
                    + " was succeeded on that endpoint by " + incarnationOf.get(at) + ": its handshake is refused");
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
        String previous = incarnationOf.put(holder, key.holderIncarnation());
        if (previous != null && !previous.equals(key.holderIncarnation())) {
            retired.put(previous, holder);
            live.entrySet().removeIf(e -> {
                if (e.getKey().holderIncarnation().equals(previous)) {
                    out.add(e.getValue());
                    return true;
                }
                return false;
            });
        }
        Q replaced = live.put(key, queuePair);
        if (replaced != null) {
            out.add(replaced);
        }
        return out;
    }

    /** The queue pairs in service now. */
    synchronized int size() {
        return live.size();
    }

    /** Takes every queue pair out of service (the transport closes) and returns them, for the caller to destroy. */
    synchronized List<Q> clear() {
        List<Q> all = new ArrayList<>(live.values());
        live.clear();
        return all;
    }
}
