package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.PeerGroup;

/**
 * One work request's worth of an op: a contiguous local range and the remote range it maps to.
 * {@link VerbsConnection} posts it; the device tracks it by work request id until its completion
 * is taken, which it reports back here ({@link #completed}, {@link #succeeded}); its
 * {@link VerbsSubmission} counts it.
 */
public final class Chunk {
    final VerbsSubmission submission;
    final int opIndex;
    final int opcode;
    final long localAddress;
    final int length;
    final int lkey;
    final long remoteAddress;
    final int rkey;
    /** The lane the chunk was given: where a replacement connection comes from ({@link HolderQueuePairs#connection}). */
    public final PeerGroup group;
    public final int slot;
    public VerbsConnection connection;
    /** The work request id the device tracks this chunk by, once claimed for posting. */
    public long workRequestId;
    /** Whether it was posted asking for a completion; written in the posting turn before the post. */
    boolean signalled;

    public Chunk(VerbsSubmission submission, int opIndex, int opcode, long localAddress, int length, int lkey,
                 long remoteAddress, int rkey, PeerGroup group, int slot) {
        this.submission = submission;
        this.opIndex = opIndex;
        this.opcode = opcode;
        this.localAddress = localAddress;
        this.length = length;
        this.lkey = lkey;
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        this.group = group;
        this.slot = slot;
    }

    /** The same work, not yet queued anywhere: to post again on a replacement connection. */
    Chunk again() {
        return new Chunk(submission, opIndex, opcode, localAddress, length, lkey, remoteAddress, rkey, group, slot);
    }

    /**
     * Whether this chunk, flushed or not posted, failed only because another submission's
     * abort (a cancel, a timeout) took its queue pair out of service: it may be posted again
     * (an RDMA READ or WRITE of unchanged memory can be repeated).
     */
    boolean collateral() {
        VerbsSubmission culprit = connection.brokenFor();
        return culprit != null && culprit != submission;
    }

    /**
     * Called by the thread that took the completion (or on close) with its status; {@code
     * error} null on success. A flushed work request's error names why its queue pair left
     * service, when known: the flush is only the echo of that (another op's error, a cancel).
     */
    public void completed(int status, String error) {
        String why = connection.brokenBecause();
        connection.retired(status != Ibv.IBV_WC_SUCCESS, error);
        if (status == Ibv.IBV_WC_WR_FLUSH_ERR && why != null) {
            error = error + "; the queue pair had left service: " + why;
        }
        if (status == Ibv.IBV_WC_WR_FLUSH_ERR && collateral()) {
            submission.collateral(this, error);
            return;
        }
        submission.chunkDone(this, status, error);
    }

    /** Whether {@code other} is of the same submission and on the same connection: delivered with this one when both succeeded. */
    public boolean sameRunAs(Chunk other) {
        return other.submission == submission && other.connection == connection;
    }

    /**
     * Chunks {@code from} to {@code to - 1} of {@code chunks}, all of one submission on one
     * connection, completed successfully (called by the thread that took their completion):
     * their credits come back at once, then the submission learns of them at once.
     */
    public static void succeeded(Chunk[] chunks, int from, int to) {
        Chunk first = chunks[from];
        first.connection.retired(to - from);
        first.submission.chunksDone(to - from);
    }
}
