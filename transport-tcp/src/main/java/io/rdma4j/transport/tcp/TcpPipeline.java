package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * A run of small ops of one submit, all to one peer, pipelined: each round of requests leaves in
 * one {@code write} and its replies come back in one or a few {@code read}s, instead of one round
 * trip per op. The owner's session gathers the replies ({@link TcpDataServer}). A batch of 64
 * small ops costs about one round trip plus the copies.
 *
 * <p>Which connection: when no other run to the peer is in progress (the peer's
 * {@link TcpMux.Lane#active} count), the run checks out a pooled connection of its own and reads
 * its replies on its own thread ({@link TcpConnection#round}): no hand-off, the fastest path for
 * one thread waiting. When another run is in progress, it goes on the peer's shared connection
 * ({@link TcpMux}), so that concurrent submits do not each hold a connection and an owner thread,
 * and do not wait for each other's round trips. A run whose local memory is confined to a thread
 * always takes its own connection (the shared connection's reader could not touch it).
 *
 * <p>Ops run in order, as the transfers of a submit do; the first failure ends the run (the rest
 * of its round has been served by then: reads and writes are idempotent, and a failed submit
 * promises nothing about its other ops). A refused op is reported as {@link TcpTransfer} reports
 * it, "(op i of n)" included.
 */
final class TcpPipeline {

    /** Ops at most this long go pipelined when two or more of them to one peer follow each other in a submit. */
    static final int MAX_OP_BYTES = TcpProtocol.INLINE_REPLY_BYTES;

    private static final System.Logger LOG = System.getLogger(TcpPipeline.class.getName());
    /** A thread no segment is confined to: a segment it may access may be accessed by any thread. */
    private static final Thread NOBODY = Thread.ofVirtual().unstarted(() -> { });

    private final TcpTransport transport;
    private final TcpSubmission submission;
    private final List<TransportOp> ops;
    private final TcpTransport.Target[] targets;
    private final Deadline deadline;

    TcpPipeline(TcpTransport transport, TcpSubmission submission, TcpTransport.Target[] targets) {
        this.transport = transport;
        this.submission = submission;
        this.ops = submission.ops();
        this.targets = targets;
        this.deadline = submission.deadline();
    }

    /** Whether {@code op} may go in a pipelined run. */
    static boolean fits(TransportOp op) {
        return op.length() > 0 && op.length() <= MAX_OP_BYTES;
    }

    /**
     * Runs {@code ops[from, to)}, which all {@link #fits} and go to one peer, on one connection.
     *
     * @throws TransportException for the first op that failed, as its own transfer would report it
     */
    void run(int from, int to) {
        Thread self = Thread.currentThread();
        boolean shareable = true;
        for (int i = from; i < to; i++) {
            MemorySegment local = ops.get(i).local();
            if (!local.isAccessibleBy(self)) {
                transfer(i).checkAccessible();      // builds the op's error only when there is one
            }
            shareable &= local.isAccessibleBy(NOBODY);
        }
        TcpMux.Lane lane = transport.lane(targets[from].peer());
        boolean contended = lane.active.getAndIncrement() > 0;
        try {
            if (contended && shareable) {
                runShared(lane, from, to);
            } else {
                runAlone(from, to);
            }
        } finally {
            lane.active.decrementAndGet();
        }
    }

    /**
     * Runs the rounds on the peer's shared connection ({@link TcpMux}): another run to the peer is
     * in progress, and this one does not wait for its round trips.
     */
    private void runShared(TcpMux.Lane lane, int from, int to) {
        int at = from;
        try {
            while (at < to && !submission.isAborted()) {
                if (deadline.isExpired()) {
                    throw transfer(at).timeout(null);
                }
                int end = TcpConnection.roundEnd(ops, at, to);
                try {
                    // false: the connection broke or retired before the round was written; the next one
                    while (!TcpMux.of(transport, lane, targets[from].peer(), deadline)
                            .round(submission, ops, targets, at, end, deadline)) {
                        if (transport.isClosing()) {
                            throw new java.nio.channels.ClosedChannelException();
                        }
                    }
                } finally {
                    submission.exitRound();
                }
                at = end;
            }
        } catch (TcpRefusedException refused) {
            throw transfer(refused.opIndex() >= 0 ? refused.opIndex() : at).refusal(refused);
        } catch (IOException e) {
            throw transfer(at).ioFailure(e, null);
        } catch (IllegalStateException | WrongThreadException e) {
            throw transfer(at).localMemoryGone(e);
        }
    }

    /** Runs the rounds on a pooled connection of its own, reading the replies on this thread. */
    private void runAlone(int from, int to) {
        TcpConnection connection = null;
        Watchdog.Guard guard = null;
        boolean keep = false;
        int at = from;  // the first op of the round in flight
        try {
            boolean exchanged = false;
            while (at < to && !submission.isAborted()) {
                if (deadline.isExpired()) {
                    throw transfer(at).timeout(null);
                }
                if (connection == null) {
                    connection = transport.pool().acquire(targets[from].peer(), deadline, true);
                    guard = transport.watchdog().arm(deadline, connection::expire);
                }
                int end = TcpConnection.roundEnd(ops, at, to);
                try {
                    round(connection, at, end);
                } catch (IOException e) {
                    if (exchanged || !connection.isReused() || connection.isExpired() || transport.isClosing()
                            || submission.isAborted()) {
                        throw e;
                    }
                    // A pooled connection may have gone stale while idle: the round once more on a
                    // new one (reads and writes are idempotent).
                    TcpConnection stale = connection;
                    LOG.log(Level.DEBUG, () -> "tcp: pooled connection to " + stale.peer() + " failed (" + e + "), reconnecting");
                    guard.close();
                    transport.pool().discard(connection);
                    connection = null;
                    connection = transport.pool().acquire(targets[from].peer(), deadline, false);
                    guard = transport.watchdog().arm(deadline, connection::expire);
                    round(connection, at, end);
                }
                exchanged = true;
                at = end;
            }
            keep = true;
        } catch (TcpRefusedException refused) {
            keep = TcpProtocol.isAccessRefusal(refused.code()); // the connection is still in step
            throw transfer(refused.opIndex() >= 0 ? refused.opIndex() : at).refusal(refused);
        } catch (IOException e) {
            throw transfer(at).ioFailure(e, connection);
        } catch (IllegalStateException | WrongThreadException e) {
            throw transfer(at).localMemoryGone(e);
        } finally {
            transport.endUse(connection, guard, keep);
        }
    }

    /** One round, bracketed by the submission so that aborting it closes the connection under the round. */
    private void round(TcpConnection connection, int from, int to) throws IOException, TcpRefusedException {
        submission.enter(0, connection);
        try {
            connection.round(ops, targets, from, to);
        } finally {
            submission.exit(0);
        }
    }

    /** Op {@code i} as a transfer of its own: what names it in errors. Error path only. */
    private TcpTransfer transfer(int i) {
        TransportOp op = ops.get(i);
        String where = ops.size() == 1 ? "" : " (op " + (i + 1) + " of " + ops.size() + ")";
        return new TcpTransfer(transport, op, op.type() == TransportOp.OpType.READ_INTO_LOCAL, targets[i], deadline,
                submission.budgetNanos(), where, submission);
    }
}
