package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.posting.Stripes;
import io.rdma4j.transport.ibverbs.posting.Chunk;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.transport.ibverbs.posting.VerbsSubmission;
import io.rdma4j.transport.ibverbs.queuepair.PeerGroup;
import io.rdma4j.spi.TransportOp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * How {@link VerbsTransport#submit} cuts one op into chunks (one work request each) once its
 * lanes are connected and its token checked: one chunk per maximum message size of each stripe
 * ({@link Stripes}), queued on the stripe's lane, or gathered with the submission's other small
 * ops to the same queue pair. Stateless.
 */
final class OpChunks {

    private OpChunks() {
    }

    /**
     * Cuts the op into the chunks of its stripes and queues them on their connected lanes, unless
     * the submission was aborted. A small op (one work request) is gathered with the submission's
     * other ops to its queue pair when {@code gather} (the submitting thread: {@link
     * VerbsSubmission#postGathered} posts them together), else queued at once.
     */
    static void enqueue(VerbsSubmission s, int index, TransportOp op, VerbsLocal local, VerbsWire.RemoteRegion r,
                        VerbsTransport.Route[] via, Lane[] where, CompletableFuture<VerbsConnection>[] lanes, boolean gather) {
        long length = op.local().byteSize();
        int stripes = lanes.length;
        if (stripes == 1) {
            enqueueSmall(s, index, op, local, r, via[0], where[0], lanes[0].join(), gather);
            return;
        }
        List<List<Chunk>> perLane = new ArrayList<>(stripes);
        int total = 0;
        for (int i = 0; i < stripes; i++) {
            s.uses(lanes[i].join());
            List<Chunk> chunks = chunks(s, index, op, local, r.address, via[i], where[i],
                    Stripes.start(length, stripes, i), Stripes.end(length, stripes, i));
            perLane.add(chunks);
            total += chunks.size();
        }
        if (s.expect(null, total)) {
            for (int i = 0; i < stripes; i++) {
                lanes[i].join().enqueue(perLane.get(i));
            }
        }
    }

    /**
     * {@link #enqueue} for an op of one stripe on connection {@code c} of {@code where}: the usual
     * small op (one work request) is gathered or queued alone; a larger one is cut at the
     * device's maximum message size.
     */
    static void enqueueSmall(VerbsSubmission s, int index, TransportOp op, VerbsLocal local, VerbsWire.RemoteRegion r,
                             VerbsTransport.Route via, Lane where, VerbsConnection c, boolean gather) {
        long length = op.local().byteSize();
        if (length > 0 && length <= via.local().maxMessageBytes()) {     // the usual small op: one work request
            Chunk chunk = chunk(s, index, op, local, r.address, via, where, 0, (int) length);
            if (gather) {
                s.gather(c, chunk);
            } else if (s.expect(c, 1)) {
                c.enqueue(chunk);
            }
            return;
        }
        s.uses(c);
        List<Chunk> chunks = chunks(s, index, op, local, r.address, via, where, 0, length);
        if (s.expect(null, chunks.size())) {
            c.enqueue(chunks);
        }
    }

    /** The work requests of bytes {@code [from, to)} of {@code op} over {@code route}: one per maximum message size. */
    private static List<Chunk> chunks(VerbsSubmission s, int index, TransportOp op, VerbsLocal local,
                                                      long remoteAddress, VerbsTransport.Route route, Lane lane, long from, long to) {
        long max = route.local().maxMessageBytes();
        List<Chunk> chunks = new ArrayList<>((int) ((to - from + max - 1) / max));
        for (long at = from; at < to; at += max) {
            chunks.add(chunk(s, index, op, local, remoteAddress, route, lane, at, (int) Math.min(max, to - at)));
        }
        return chunks;
    }

    /** The work request for the {@code length} bytes of {@code op} at {@code at} over {@code route}. */
    private static Chunk chunk(VerbsSubmission s, int index, TransportOp op, VerbsLocal local,
                                               long remoteAddress, VerbsTransport.Route route, Lane lane, long at, int length) {
        int opcode = op.type() == TransportOp.OpType.READ_INTO_LOCAL ? Ibv.IBV_WR_RDMA_READ : Ibv.IBV_WR_RDMA_WRITE;
        return new Chunk(s, index, opcode, op.local().address() + at, length, local.lkey(route.localIndex()),
                remoteAddress + op.remoteOffset() + at, route.remote().rkey(), lane.group(), lane.slot());
    }

    /** Slot {@code slot} of the queue pairs of {@code group}: where a stripe goes, and where its replacement comes from. */
    record Lane(PeerGroup group, int slot) {
    }
}
