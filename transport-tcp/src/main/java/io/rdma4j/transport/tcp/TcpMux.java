package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One connection to a peer shared by the pipelined rounds of concurrent submits. A caller queues
 * its round of requests (payloads inline; a memory copy under a short lock, never I/O); a caller
 * that finds nobody writing becomes the writer and writes everything queued, in passes of one
 * {@code write} each, so the rounds of callers that came meanwhile leave together and nobody waits
 * for a lock held across a system call. A reader thread of the connection ({@link TcpMuxReader})
 * reads the replies, which the owner sends in request order, and hands each round its own in
 * first-in-first-out order. A round waits for its own replies only, not for another submit's round trip, and the replies of
 * several rounds arrive in one {@code read}. {@link TcpPipeline} sends a run here when another run
 * to the same peer is in progress; an uncontended run keeps its own pooled connection and reads its
 * replies itself (no hand-off: an 8 B batch of 64 waited for by one thread costs what it did).
 *
 * <p><b>The writer</b> writes at most {@value #MAX_PASSES} passes and none after its own deadline;
 * what is still queued then goes to a pool thread, so no caller is held up for long by others'
 * rounds. A queue full of unwritten rounds ({@value #QUEUE_BYTES} bytes) makes the next caller
 * wait for room, up to its deadline.
 *
 * <p><b>Why a reader thread, not one of the waiting callers.</b> A caller that reads blocks in
 * {@code read}: neither its deadline nor a {@code cancel()} could get it out without closing the
 * connection the other rounds wait on, and it could not leave while other rounds' replies are still
 * due without handing the read over to a thread that may itself be writing (and a writer blocked
 * because nobody reads replies is a deadlock). A waiting caller here only parks, until its round is
 * done, it is abandoned, or its deadline; the reader is always there while the connection lives.
 * The cost is one thread wake-up per read of replies, paid only while runs overlap (when every
 * round has to wake its waiter anyway); the uncontended path has no hand-off at all.
 *
 * <p><b>Rounds and memory.</b> A {@link TcpMuxRound} holds a state that is also a short lock:
 * {@code BUSY} while the caller copies its writes' payloads into the request buffer or the reader
 * copies replies into its reads' segments (memory copies only, never I/O). Abandoning a round
 * ({@code cancel()}, a failure set from outside, the deadline; see {@link TcpSubmission#abort()})
 * waits out a {@code BUSY} state and leaves the round {@code ABANDONED}: the reader still reads
 * its replies, to stay in step, and discards them. So once an abandoned submit's future completed,
 * nothing touches its local memory.
 *
 * <p><b>Failures.</b> An access refusal fails its round only. A connection that breaks (the peer
 * died or closed it, a protocol error, a refusal that ends the connection, {@link TcpTransport#close()}
 * closing it, a write not finished by its deadline) fails every round on it, each with the first
 * cause, and is never used again: the next round opens a new one. The connection also closes, and
 * its reader ends, between one and two {@value #LINGER_MILLIS} ms looks of an idle watch (a
 * watchdog guard re-armed once per look) that found no round in flight and none written since.
 *
 * <p>Thread-safe.
 */
final class TcpMux {

    /** How long a shared connection stays open without rounds (its reader thread with it). */
    static final long LINGER_MILLIS = 1000;
    /** Bytes of each of the two request queues: a few rounds' requests (a round's fit {@link TcpProtocol#SESSION_BUFFER_BYTES}). */
    static final int QUEUE_BYTES = 4 * TcpProtocol.SESSION_BUFFER_BYTES;
    /** Most writes a caller does for others' rounds before it hands the rest to a pool thread. */
    static final int MAX_PASSES = 8;
    /** Bytes of the reader's buffer: a round's replies fit it, and several rounds' usually do. */
    static final int IN_BUFFER_BYTES = 2 * TcpProtocol.SESSION_BUFFER_BYTES;

    /** A peer's runs in progress and its shared connection, if any. */
    static final class Lane {
        /** Pipelined runs to the peer in progress, shared or not. */
        final AtomicInteger active = new AtomicInteger();
        /** Held while the shared connection is being opened. */
        final ReentrantLock opening = new ReentrantLock();
        /** The shared connection, while it is usable. */
        volatile TcpMux mux;
    }

    private final TcpTransport transport;
    private final Lane lane;
    private final TcpConnection connection;
    private final SocketChannel channel;
    private final Endpoint peer;
    /** Held to queue a round (a memory copy) and to swap the queue; never during I/O. */
    private final ReentrantLock appendLock = new ReentrantLock();
    /** Signalled when the queue was swapped out (room for more rounds) or the connection broke. */
    private final Condition room = appendLock.newCondition();
    /** The requests queued and not yet taken by the writer (under appendLock). */
    private ByteBuffer pending = ByteBuffer.allocateDirect(QUEUE_BYTES);
    private MemorySegment pendingMemory = MemorySegment.ofBuffer(pending);
    /** The other buffer: being written by the writer, or empty. */
    private ByteBuffer spare = ByteBuffer.allocateDirect(QUEUE_BYTES);
    private MemorySegment spareMemory = MemorySegment.ofBuffer(spare);
    /** Whether a thread is writing (under appendLock). */
    private boolean writing;
    /** The last round written (under appendLock); at first an empty one, where the reader starts. */
    private TcpMuxRound tail = new TcpMuxRound(List.of(), null, 0, 0, null);
    /** Rounds written and not yet answered. */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Rounds ever written (under appendLock); the idle watch compares it between looks. */
    private long written;
    private long writtenAtLastLook = -1;
    /** Set under appendLock: no round is written any more. */
    private volatile boolean broken;
    private final AtomicReference<Throwable> cause = new AtomicReference<>();
    private volatile boolean retired;
    /** The connection's reader thread's work: replies to their rounds. */
    private final TcpMuxReader reader;

    private TcpMux(TcpTransport transport, Lane lane, TcpConnection connection) {
        this.transport = transport;
        this.lane = lane;
        this.connection = connection;
        this.channel = connection.channel();
        this.peer = connection.peer();
        this.reader = new TcpMuxReader(this, channel, peer, outstanding, tail);
    }

    /**
     * The lane's shared connection, opened (with its reader) when there is none or it broke.
     *
     * @throws IOException when connecting fails or the deadline passes first
     */
    static TcpMux of(TcpTransport transport, Lane lane, Endpoint peer, Deadline deadline) throws IOException {
        TcpMux m = lane.mux;
        if (m != null && !m.broken) {
            return m;
        }
        try {
            if (!lane.opening.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                throw new SocketTimeoutException("deadline passed while another thread connected to " + peer);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting to connect to " + peer);
        }
        try {
            m = lane.mux;
            if (m != null && !m.broken) {
                return m;
            }
            TcpConnection c = transport.pool().acquire(peer, deadline, false);
            m = new TcpMux(transport, lane, c);
            try {
                transport.threads().start("rdma4j-tcp-mux-" + peer, m.reader::readLoop, TcpThreads.IGNORE);
            } catch (RuntimeException | Error e) {
                transport.pool().discard(c);
                throw new IOException("cannot start the reader of a shared connection to " + peer + ": " + e, e);
            }
            lane.mux = m;
            m.watch();
            return m;
        } finally {
            lane.opening.unlock();
        }
    }

    /** Rounds written and not yet answered (tests, diagnostics). */
    int outstanding() {
        return outstanding.get();
    }

    boolean isBroken() {
        return broken;
    }

    /**
     * Runs {@code ops[from, to)}, one round as {@link TcpConnection#roundEnd} cut it, all to this
     * connection's peer: writes its requests, then waits for its replies, its deadline or its
     * submit's abort. Returns normally on success and when the submit was aborted (its caller
     * looks at {@link TcpSubmission#isAborted()}).
     *
     * @return false when the connection had broken (or retired) before the round could be written:
     *         nothing was sent, take the lane's next connection; true otherwise
     * @throws TcpRefusedException    when the owner refused ops (the first one named by its index)
     * @throws SocketTimeoutException when the deadline passed first
     * @throws IOException            when the connection broke (the cause it broke with)
     * @throws RuntimeException       when a read's local memory became unusable (its arena closed)
     */
    boolean round(TcpSubmission submission, List<TransportOp> ops, TcpTransport.Target[] targets, int from, int to,
               Deadline deadline) throws IOException, TcpRefusedException {
        TcpMuxRound r = new TcpMuxRound(ops, targets, from, to, Thread.currentThread());
        int bytes = requestBytes(r);
        boolean write;
        try {
            if (!appendLock.tryLock(deadline.remainingNanos(), TimeUnit.NANOSECONDS)) {
                throw new SocketTimeoutException("deadline passed while other rounds were being queued to " + peer);
            }
            try {
                while (!broken && pending.remaining() < bytes) {
                    long left = deadline.remainingNanos();
                    if (left <= 0) {
                        throw new SocketTimeoutException("deadline passed while other rounds were being written to " + peer);
                    }
                    room.awaitNanos(left);
                }
                if (broken) {
                    return false;
                }
                if (!submission.enterRound(r)) {
                    r.release();
                    r.abandon();
                    return true; // aborted: nothing was written
                }
                int start = pending.position();
                try {
                    build(r, pending, pendingMemory);
                } catch (RuntimeException | Error e) {
                    pending.position(start); // the round is not sent
                    throw e;
                } finally {
                    r.release(); // an abort waiting for the build may go on
                }
                tail.link(r); // the reader may look from now on
                tail = r;
                written++;
                outstanding.incrementAndGet();
                write = !writing;
                writing = true;
            } finally {
                appendLock.unlock();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting to write to " + peer);
        }
        if (write) {
            drain(deadline, false);
        }
        await(r, deadline);
        return true;
    }

    /** Bytes of the round's requests, payloads inline. */
    private static int requestBytes(TcpMuxRound r) {
        int bytes = 0;
        for (int i = r.from; i < r.to; i++) {
            TransportOp op = r.ops.get(i);
            bytes += TcpProtocol.REQUEST_HEADER_BYTES + (op.type() == TransportOp.OpType.READ_INTO_LOCAL ? 0 : (int) op.length());
        }
        return bytes;
    }

    /**
     * The writer: writes what is queued, in passes (each swaps the queue with the other buffer
     * and writes it in one {@code write} or a few), until the queue is empty. A caller becomes
     * the writer when it queues a round and nobody is writing; it writes at most
     * {@value #MAX_PASSES} passes and none after its deadline, then hands what is still queued to
     * a pool thread ({@code helper}) so that it is not held up by other rounds. A write that
     * blocks past the writer's deadline (the peer stopped reading) breaks the connection.
     */
    private void drain(Deadline deadline, boolean helper) {
        int passes = 0;
        while (true) {
            ByteBuffer batch;
            appendLock.lock();
            try {
                if (broken || pending.position() == 0) {
                    writing = false;
                    return;
                }
                if (!helper && (passes >= MAX_PASSES || deadline.isExpired())) {
                    handOff();
                    return;
                }
                batch = pending;
                MemorySegment batchMemory = pendingMemory;
                pending = spare;
                pendingMemory = spareMemory;
                spare = batch;
                spareMemory = batchMemory;
                room.signalAll();
            } finally {
                appendLock.unlock();
            }
            passes++;
            Watchdog.Guard guard = transport.watchdog().arm(helper ? Deadline.after(transport.idleTimeout()) : deadline,
                    this::writeStalled);
            try {
                TcpProtocol.writeFully(channel, batch.flip());
            } catch (IOException e) {
                breakWith(e); // the reader fails every round, this writer's too
            } finally {
                guard.disarm();
                batch.clear();
            }
        }
    }

    /** Under appendLock, with {@code writing} set: a pool thread writes what is queued. */
    private void handOff() {
        try {
            transport.threads().start("rdma4j-tcp-mux-writer-" + peer, () -> drain(null, true), TcpThreads.IGNORE);
        } catch (RuntimeException | Error e) {
            writing = false;
            breakWith(new IOException("cannot start a writer for the shared connection to " + peer + ": " + e, e));
        }
    }

    /** Puts the round's requests in {@code o}, copying the writes' payloads from their local segments. */
    private static void build(TcpMuxRound r, ByteBuffer o, MemorySegment memory) {
        for (int i = r.from; i < r.to; i++) {
            TransportOp op = r.ops.get(i);
            TcpTransport.Target t = r.targets[i];
            int length = (int) op.length();
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            TcpProtocol.putPreamble(o, read ? TcpProtocol.READ : TcpProtocol.WRITE,
                    TcpProtocol.REQUEST_FIXED_BYTES + (read ? 0 : length));
            o.putLong(t.bufferId()).put(t.accessKey(), 0, TcpProtocol.KEY_BYTES)
                    .put(t.incarnation(), 0, TcpProtocol.INCARNATION_BYTES).putLong(op.remoteOffset()).putLong(length);
            if (!read) {
                MemorySegment.copy(op.local(), 0, memory, o.position(), length);
                o.position(o.position() + length);
            }
        }
    }

    /** Waits for the round's outcome; see {@link #round}. */
    private void await(TcpMuxRound r, Deadline deadline) throws IOException, TcpRefusedException {
        while (true) {
            int s = r.state();
            if (s == TcpMuxRound.DONE) {
                Throwable f = r.failure();
                if (f == null) {
                    return;
                }
                if (f instanceof TcpRefusedException e) {
                    throw e;
                }
                if (f instanceof IOException e) {
                    throw e;
                }
                throw (RuntimeException) f;
            }
            if (s == TcpMuxRound.ABANDONED) {
                return; // aborted: whoever aborted completes the future
            }
            long left = deadline.remainingNanos();
            if (left <= 0) {
                if (r.abandon()) {
                    throw new SocketTimeoutException("deadline passed waiting for the replies of " + (r.to - r.from)
                            + " op(s) from " + peer);
                }
                continue; // done meanwhile
            }
            LockSupport.parkNanos(this, left);
        }
    }

    /**
     * Reader only, at its end: waits until no round is being queued any more ({@code broken} is
     * set), then returns the cause the connection broke with.
     */
    Throwable causeOnceNothingQueues() {
        appendLock.lock(); // after it, no round is queued any more (broken is set)
        appendLock.unlock();
        return cause.get();
    }

    /** Whether the connection's end is worth a debug line: it did not retire and the transport is not closing. */
    boolean closedUnexpectedly() {
        return !retired && !transport.isClosing();
    }

    /** Marks the connection broken with {@code e} (the first cause wins), closes it and takes it off its lane. */
    void breakWith(Throwable e) {
        cause.compareAndSet(null, e);
        broken = true;
        appendLock.lock();
        try {
            room.signalAll(); // callers waiting for room take the lane's next connection
        } finally {
            appendLock.unlock();
        }
        if (lane.mux == this) {
            lane.mux = null;
        }
        transport.pool().discard(connection);
        transport.forgetLaneIfIdle(peer);
    }

    /** Watchdog action: a write did not finish by its round's deadline (the peer stopped reading). */
    private void writeStalled() {
        breakWith(new IOException("peer " + peer + " stopped taking requests: a round could not be written before "
                + "its deadline"));
    }

    /** The idle watch: retires the connection after {@link #LINGER_MILLIS} ms without rounds. */
    private void watch() {
        if (broken) {
            return;
        }
        boolean retire = transport.isClosing();
        if (!retire && outstanding.get() == 0 && appendLock.tryLock()) {
            try {
                if (outstanding.get() == 0 && !writing && written == writtenAtLastLook) {
                    retired = true;
                    retire = true;
                    broken = true;
                }
                writtenAtLastLook = written;
            } finally {
                appendLock.unlock();
            }
        }
        if (retire) {
            retired = true;
            breakWith(new ClosedChannelException());
            return;
        }
        transport.watchdog().arm(TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS), this::watch);
    }


    @Override
    public String toString() {
        return "TcpMux[" + peer + ", " + outstanding.get() + " round(s) in flight" + (broken ? ", broken" : "") + "]";
    }
}
