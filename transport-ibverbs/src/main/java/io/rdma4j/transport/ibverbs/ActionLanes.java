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
 * an action mostly go to one peer through the same decoded token, so the lookups of the op
 * before serve the next one; an op through other routes looks them up afresh.
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
    private int laneCount;
    /** The lane the next small op takes, before reduction modulo {@link #laneCount}. */
    private int next;
    /** Per lane: its route, where it leads, and its connection as looked up in this action (null until then). */
    private VerbsTransport.Route[] via;
    private OpChunks.Lane[] where;
    private CompletableFuture<VerbsConnection>[] connections;

    ActionLanes(HolderQueuePairs holderSide, int qpsPerPeer) {
        this.holderSide = holderSide;
        this.qpsPerPeer = qpsPerPeer;
    }

    /** Makes {@code r} the routes the next small ops take lanes of (looked up once, unless they are those of the op before). */
    @SuppressWarnings("unchecked")
    void use(List<VerbsTransport.Route> r) {
        if (r == routes) {
            return;
        }
        routes = r;
        laneCount = r.size() * qpsPerPeer;
        PeerGroup[] groups = new PeerGroup[r.size()];
        for (int i = 0; i < groups.length; i++) {
            groups[i] = holderSide.group(r.get(i).peers());
        }
        via = new VerbsTransport.Route[laneCount];
        where = new OpChunks.Lane[laneCount];
        connections = new CompletableFuture[laneCount];
        for (int lane = 0; lane < laneCount; lane++) {
            int route = lane % r.size();
            via[lane] = r.get(route);
            where[lane] = new OpChunks.Lane(groups[route], lane / r.size());
        }
        next = groups[0].firstSlot(1);
    }

    /** The lane the next small op to the routes of {@link #use} takes. */
    int nextLane() {
        return Math.floorMod(next++, laneCount);
    }

    VerbsTransport.Route via(int lane) {
        return via[lane];
    }

    OpChunks.Lane where(int lane) {
        return where[lane];
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
