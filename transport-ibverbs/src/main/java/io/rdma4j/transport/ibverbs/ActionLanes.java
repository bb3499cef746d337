package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.PeerGroup;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The lanes the small ops (one stripe each) of one {@link VerbsTransport#submit} take, looked up
 * once per action and peer instead of once per op: the peer group of each route, where each lane
 * leads ({@link OpChunks.Lane}) and its connection as first looked up in this action. The ops of
 * an action mostly go to one peer, through one token or several (slices, buffers of one owner),
 * so the lookups of the op before serve the next one when its routes lead to the same queue-pair
 * groups ({@link PeerGroup.Key}); an op to another peer looks them up afresh. Each op's own route
 * (its token's memory region) comes from its own routes.
 *
 * <p>Small ops take turns on the lanes as before: the action takes one start from the group's
 * rotation ({@link PeerGroup#firstSlot}) the first time it meets the routes, then its small ops
 * to them take the lanes in turn from there. A connection looked up once serves the action's
 * later ops too: one that breaks meanwhile is the same as one that breaks just after an op looked
 * it up (its chunks are refused or flushed, and posted again on a replacement, {@code
 * VerbsSubmission}).
 *
 * <p>Not thread-safe: the submitting thread's only, for the length of one submit.
 */
final class ActionLanes {

    private final HolderQueuePairs holderSide;
    private final int qpsPerPeer;
    /** The routes of the op before (by identity), or null before the first. */
    private List<VerbsTransport.Route> routes;
    /** The queue-pair groups those routes lead to, by route. */
    private PeerGroup.Key[] keys;
    private int laneCount;
    /** The lane the next small op takes, before reduction modulo {@link #laneCount}. */
    private int next;
    /** Per lane: where it leads, and its connection as looked up in this action (null until then). */
    private OpChunks.Lane[] where;
    private CompletableFuture<VerbsConnection>[] connections;
    /** Per lane: its connection once connected, as {@link #ready} found it (null until then). */
    private VerbsConnection[] ready;

    ActionLanes(HolderQueuePairs holderSide, int qpsPerPeer) {
        this.holderSide = holderSide;
        this.qpsPerPeer = qpsPerPeer;
    }

    /**
     * Makes {@code r} the routes the next small ops take lanes of: the lanes of the op before when
     * {@code r} leads to the same queue-pair groups, else looked up now.
     */
    @SuppressWarnings("unchecked")
    void use(List<VerbsTransport.Route> r) {
        if (r == routes) {
            return;
        }
        if (sameGroups(r)) {
            routes = r;
            return;
        }
        routes = r;
        keys = new PeerGroup.Key[r.size()];
        laneCount = r.size() * qpsPerPeer;
        PeerGroup[] groups = new PeerGroup[r.size()];
        for (int i = 0; i < groups.length; i++) {
            keys[i] = r.get(i).peers();
            groups[i] = holderSide.group(keys[i]);
        }
        where = new OpChunks.Lane[laneCount];
        connections = new CompletableFuture[laneCount];
        ready = new VerbsConnection[laneCount];
        for (int lane = 0; lane < laneCount; lane++) {
            where[lane] = new OpChunks.Lane(groups[lane % r.size()], lane / r.size());
        }
        next = groups[0].firstSlot(1);
    }

    /** Whether {@code r} leads to the queue-pair groups of the routes before, route by route. */
    private boolean sameGroups(List<VerbsTransport.Route> r) {
        if (keys == null || r.size() != keys.length) {
            return false;
        }
        for (int i = 0; i < keys.length; i++) {
            if (!keys[i].equals(r.get(i).peers())) {
                return false;
            }
        }
        return true;
    }

    /** The lane the next small op to the routes of {@link #use} takes. */
    int nextLane() {
        return Math.floorMod(next++, laneCount);
    }

    /** The route of {@code lane} among the routes of the op ({@link #use}): its token's memory region. */
    VerbsTransport.Route via(int lane) {
        return routes.get(lane % routes.size());
    }

    OpChunks.Lane where(int lane) {
        return where[lane];
    }

    /**
     * The connection of {@code lane} when it is connected and in service: as found before in this
     * action (one check that it is not broken), else as {@link #connection} looks it up; null
     * while its handshake is under way or failed.
     */
    VerbsConnection ready(int lane) {
        VerbsConnection c = ready[lane];
        if (c != null && !c.isBroken()) {
            return c;
        }
        CompletableFuture<VerbsConnection> f = connection(lane);
        c = f.isDone() && !f.isCompletedExceptionally() ? f.join() : null;
        ready[lane] = c;
        return c;
    }

    /** The connection of {@code lane}: as looked up before in this action, else looked up now (a handshake on first use). */
    CompletableFuture<VerbsConnection> connection(int lane) {
        CompletableFuture<VerbsConnection> c = connections[lane];
        if (c == null || c.isDone() && (c.isCompletedExceptionally() || c.join().isBroken())) {     // a broken one is replaced, as each op's lookup did
            OpChunks.Lane w = where[lane];
            c = connections[lane] = holderSide.connection(w.group(), w.slot());
        }
        return c;
    }
}
