package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.IbverbsException;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;
import io.rdma4j.transport.ibverbs.ffi.SendWorkRequests;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The chains of work requests that one {@link VerbsConnection} posts to its queue pair, and the
 * chunks sent there whose completion was not taken yet.
 *
 * <p><b>Chains and selective signalling.</b> The chunks claimed together (an action's ops to this
 * queue pair, as many as there are free slots, and whatever other threads handed over meanwhile)
 * are posted as one chain of work requests, linked through {@code next}, in one {@code
 * ibv_post_send}. Only some ask for a completion ({@code IBV_SEND_SIGNALED}): one in
 * {@code signalEvery} in a row, and always the last chunk of each submission in the chain, so
 * that every submission learns of its end without waiting for another's. An RC send queue
 * completes in order, so the completion of a signalled work request stands for every work request
 * posted before it here that has not completed yet: the device hands them over in that order
 * ({@link #takeSent}). Writes of at most the queue pair's {@code max_inline_data} go inline
 * ({@code IBV_SEND_INLINE}): the device copies their bytes when they are posted.
 *
 * <p>Thread-safety: {@link #post} and {@link #close} run in the connection's posting turn only
 * ({@link PostingTurn}); {@link #takeSent} on any thread, under the lock of {@link #sent}, which
 * is taken last and alone.
 */
final class SendChains {

    private final VerbsConnection connection;
    private final VerbsDevice device;
    private final QueuePair qp;
    /** The chain being posted; used in the posting turn only. As long as the most chunks in flight at once. */
    private final SendWorkRequests request;
    /** One work request in this many posted in a row asks for a completion. */
    private final int signalEvery;
    /** Writes of at most this many bytes go inline. */
    private final int maxInline;
    /** Work requests posted without a completion since the last one with; in the posting turn only. */
    private int unsignalledInARow;
    /**
     * The chunks posted (or being posted) here whose completion was not taken yet, in the order
     * they were posted: what a completion stands for ({@link #takeSent}). Its own lock, taken last.
     */
    private final ArrayDeque<Chunk> sent = new ArrayDeque<>();

    /**
     * @param connection  whose queue pair this posts to; read for whether it left service
     * @param depth       work requests in one chain at most (the connection's credits)
     * @param signalEvery one work request in this many posted in a row asks for a completion, at least 1
     */
    SendChains(VerbsConnection connection, QueuePair qp, int depth, int signalEvery) {
        this.connection = connection;
        this.device = connection.device;
        this.qp = qp;
        this.signalEvery = Math.max(1, signalEvery);
        this.maxInline = qp.maxInlineData();
        this.request = SendWorkRequests.allocate(depth, 1);
    }

    /** Starts the failure of a post that left posted work requests without a completion to come: the queue pair is destroyed. */
    static final String DANGLING = "ibv_post_send failed after posting part of a chain";

    /**
     * Posts claimed chunks, in the connection's posting turn, as chains of work requests (one {@code
     * ibv_post_send} each; one chain unless they outnumber the work requests of {@link #request}),
     * unless the queue pair left service meanwhile. A chunk asks for a completion when it is the
     * last of its submission in the chain, or {@link #signalEvery} in a row did not. The chunks go
     * into {@link #sent} before the post: their completion may be taken while this thread is still
     * in it. Those not posted are taken out of it and marked unposted (id 0), or accounted for (id
     * -1) when the device's close failed them meanwhile (the transport closed between their claim
     * and this post): they must not be failed twice. When the driver posted part of a chain and the
     * last work request it posted asks for no completion, the failure starts with {@link #DANGLING}:
     * nothing may ever report those, so the queue pair is destroyed ({@link VerbsConnection#destroyNow}).
     *
     * @return null, or the chunks not posted and why
     */
    PostingTurn.Failed<Chunk> post(List<Chunk> chunks) {
        int n = chunks.size();
        for (int from = 0; from < n; ) {
            int count = Math.min(n - from, request.capacity());
            String why = connection.brokenBecause();
            int posted = 0;
            if (why == null) {
                for (int i = 0; i < count; i++) {
                    Chunk c = chunks.get(from + i);
                    boolean signal = i == count - 1 || chunks.get(from + i + 1).submission != c.submission
                            || ++unsignalledInARow >= signalEvery;
                    if (signal) {
                        unsignalledInARow = 0;
                    }
                    c.signalled = signal;
                    int flags = (signal ? Ibv.IBV_SEND_SIGNALED : 0)
                            | (c.opcode == Ibv.IBV_WR_RDMA_WRITE && c.length <= maxInline ? Ibv.IBV_SEND_INLINE : 0);
                    request.stage(i, c.workRequestId, c.opcode, flags, c.localAddress, c.length, c.lkey, c.remoteAddress, c.rkey);
                }
                request.writeStaged(count);
                synchronized (sent) {
                    for (int i = 0; i < count; i++) {
                        sent.addLast(chunks.get(from + i));
                    }
                }
                try {
                    qp.postSend(request, count);
                    device.posted();
                    from += count;
                    continue;
                } catch (RuntimeException e) {
                    int refused = e instanceof IbverbsException ? request.refusedIndex() : 0;
                    posted = refused < 0 ? count : refused;     // none named: assume all went (the queue pair is destroyed)
                    why = "ibv_post_send failed: " + e.getMessage();
                    if (posted > 0 && (refused < 0 || !chunks.get(from + posted - 1).signalled)) {
                        why = DANGLING + " (" + posted + " of " + count + " work requests posted): " + why;
                    }
                    synchronized (sent) {
                        for (int i = posted; i < count; i++) {
                            sent.removeLastOccurrence(chunks.get(from + i));
                        }
                    }
                }
            }
            List<Chunk> unposted = new ArrayList<>(chunks.subList(from + posted, n));
            for (Chunk c : unposted) {
                c.workRequestId = device.untrack(c.workRequestId) ? 0 : -1;
            }
            return new PostingTurn.Failed<>(unposted, why);
        }
        return null;
    }

    /**
     * The completion of {@code c}, posted here, was taken off the completion queue: moves the
     * chunks posted here before it, of which no completion was taken, into {@code before} (oldest
     * first), and forgets them and {@code c} ({@link VerbsConnection#takeSent}).
     */
    void takeSent(Chunk c, List<Chunk> before) {
        synchronized (sent) {
            for (Chunk p; (p = sent.pollFirst()) != null; ) {
                if (p == c) {
                    return;
                }
                before.add(p);
            }
        }
    }

    /** Frees the work requests; in the posting turn, once the queue pair is destroyed. */
    void close() {
        request.close();
    }
}
