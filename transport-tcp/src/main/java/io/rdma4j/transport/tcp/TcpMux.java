package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
 * for a lock held across a system call. A reader thread of the connection reads the replies, which
 * the owner sends in request order, and hands each round its own in first-in-first-out order. A
 * round waits for its own replies only, not for another submit's round trip, and the replies of
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
 * <p><b>Rounds and memory.</b> A {@link Round} holds a state that is also a short lock:
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

    private static final System.Logger LOG = System.getLogger(TcpMux.class.getName());

    /** A peer's runs in progress and its shared connection, if any. */
    static final class Lane {
        /** Pipelined runs to the peer in progress, shared or not. */
        final AtomicInteger active = new AtomicInteger();
        /** Held while the shared connection is being opened. */
        final ReentrantLock opening = new ReentrantLock();
        /** The shared connection, while it is usable. */
        volatile TcpMux mux;
    }

    /**
     * One round of a submit's ops, in flight on a shared connection.
     */
    static final class Round {
        static final int PENDING = 0;
        static final int BUSY = 1;
        static final int DONE = 2;
        static final int ABANDONED = 3;
        private static final VarHandle STATE;
        private static final VarHandle NEXT;

        static {
            try {
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                STATE = lookup.findVarHandle(Round.class, "state", int.class);
                NEXT = lookup.findVarHandle(Round.class, "next", Round.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        final List<TransportOp> ops;
        final TcpTransport.Target[] targets;
        final int from;
        final int to;
        final Thread waiter;
        /** Starts BUSY: the caller builds its requests before anyone else may look. */
        private volatile int state = BUSY;
        /** The round written after this one, or null (through NEXT). */
        @SuppressWarnings("unused")
        private volatile Round next;
        /** Reader only: the op whose reply comes next, the first refusal, a local failure. */
        private int replyAt;
        private TcpRefusedException refused;
        private RuntimeException localFailure;
        /** Why the round failed, written before DONE; null on success. */
        private Throwable failure;

        Round(List<TransportOp> ops, TcpTransport.Target[] targets, int from, int to, Thread waiter) {
            this.ops = ops;
            this.targets = targets;
            this.from = from;
            this.to = to;
            this.waiter = waiter;
            this.replyAt = from;
        }

        private Round next() {
            return (Round) NEXT.getVolatile(this);
        }

        /** PENDING to BUSY; false when the round was abandoned or is done. */
        private boolean hold() {
            return STATE.compareAndSet(this, PENDING, BUSY);
        }

        /** BUSY back to PENDING. */
        private void release() {
            state = PENDING;
        }

        /** BUSY (held by the caller) to DONE with {@code failure}, and wakes the caller. */
        private void complete(Throwable failure) {
            this.failure = failure;
            state = DONE;
            LockSupport.unpark(waiter);
        }

        /**
         * Makes sure nobody touches the round's local memory any more: waits out a copy in
         * progress, then leaves the round abandoned, and wakes its caller. Returns false when the
         * round was done first (its outcome stands), true when it is abandoned now.
         */
        boolean abandon() {
            while (true) {
                int s = state;
                if (s == DONE) {
                    return false;
                }
                if (s == ABANDONED) {
                    return true;
                }
                if (s == PENDING && STATE.compareAndSet(this, PENDING, ABANDONED)) {
                    LockSupport.unpark(waiter);
                    return true;
                }
                Thread.onSpinWait(); // BUSY: a memory copy of at most a round's bytes
            }
        }

        boolean isAbandoned() {
            return state == ABANDONED;
        }
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
    private final ByteBuffer in = ByteBuffer.allocateDirect(IN_BUFFER_BYTES);
    private final MemorySegment inMemory = MemorySegment.ofBuffer(in);
    /** The last round answered (reader only); its {@code next} is the oldest unanswered. */
    private Round head = new Round(List.of(), null, 0, 0, null);
    /** The last round written (under appendLock). */
    private Round tail = head;
    /** Rounds written and not yet answered. */
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Rounds ever written (under appendLock); the idle watch compares it between looks. */
    private long written;
    private long writtenAtLastLook = -1;
    /** Set under appendLock: no round is written any more. */
    private volatile boolean broken;
    private final AtomicReference<Throwable> cause = new AtomicReference<>();
    private volatile boolean retired;
    /** Reader only: the round whose BUSY state the reader holds, or null. */
    private Round held;

    private TcpMux(TcpTransport transport, Lane lane, TcpConnection connection) {
        this.transport = transport;
        this.lane = lane;
        this.connection = connection;
        this.channel = connection.channel();
        this.peer = connection.peer();
        in.flip();
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
                transport.threads().start("rdma4j-tcp-mux-" + peer, m::readLoop, TcpThreads.IGNORE);
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
        Round r = new Round(ops, targets, from, to, Thread.currentThread());
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
                Round.NEXT.setVolatile(tail, r); // the reader may look from now on
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
    private static int requestBytes(Round r) {
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
    private static void build(Round r, ByteBuffer o, MemorySegment memory) {
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
    private void await(Round r, Deadline deadline) throws IOException, TcpRefusedException {
        while (true) {
            int s = r.state;
            if (s == Round.DONE) {
                Throwable f = r.failure;
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
            if (s == Round.ABANDONED) {
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

    /** The reader: reads replies and hands them to their rounds until the connection breaks or retires. */
    private void readLoop() {
        try {
            while (true) {
                if (held != null) {
                    held.release(); // never block in read holding a round
                    held = null;
                }
                in.compact();
                int n;
                try {
                    n = channel.read(in);
                } finally {
                    in.flip();
                }
                if (n < 0) {
                    throw new EOFException("connection closed by peer");
                }
                process();
            }
        } catch (IOException | RuntimeException | Error e) {
            if (held != null) {
                held.release();
                held = null;
            }
            breakWith(e);
            failAll();
        }
    }

    /**
     * Hands every complete reply in {@code in} to its round; the round whose replies ran out of
     * the buffer may stay {@link #held}.
     */
    private void process() throws IOException {
        ByteBuffer b = in;
        while (b.remaining() >= TcpProtocol.PREAMBLE_BYTES) {
            Round r = head.next();
            if (r == null) {
                throw new TcpProtocolException("peer " + peer + ": a reply to no request on a shared connection");
            }
            int i = r.replyAt;
            TransportOp op = r.ops.get(i);
            boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
            int at = b.position();
            int bodyLength;
            try {
                bodyLength = TcpProtocol.replyBodyLength(b.slice(at, TcpProtocol.PREAMBLE_BYTES),
                        read ? TcpProtocol.DATA : TcpProtocol.OK);
            } catch (TcpProtocolException e) {
                throw new TcpProtocolException("peer " + peer + ": " + e.getMessage());
            }
            if (b.remaining() < TcpProtocol.PREAMBLE_BYTES + bodyLength) {
                break; // the rest of this reply is still on its way
            }
            if (held != r) {
                if (held != null) {
                    held.release();
                }
                held = r.hold() ? r : null;
            }
            int body = at + TcpProtocol.PREAMBLE_BYTES;
            b.position(body + bodyLength);
            if (b.get(at + 3) == TcpProtocol.ERROR) {
                TcpRefusedException e = TcpProtocol.decodeError(b.slice(body, bodyLength)).at(i);
                if (r.refused == null) {
                    r.refused = e;
                }
                if (!TcpProtocol.isAccessRefusal(e.code())) {
                    // The owner may not go on serving this connection: this round fails with the
                    // refusal, every other with the connection.
                    finishRound(r, e);
                    throw new IOException("peer " + peer + " refused a request on a shared connection in a way "
                            + "that ends the connection: " + e.getMessage());
                }
            } else if (read) {
                if (bodyLength != op.length()) {
                    throw new TcpProtocolException("tcp read chunk size mismatch: expected " + op.length() + ", got " + bodyLength);
                }
                if (held == r && r.localFailure == null) {
                    try {
                        MemorySegment.copy(inMemory, body, op.local(), 0, bodyLength);
                    } catch (IllegalStateException | WrongThreadException e) {
                        r.localFailure = e; // the caller closed its memory: the round fails, the connection is fine
                    }
                }
            }
            r.replyAt = i + 1;
            if (r.replyAt == r.to) {
                Throwable f = r.localFailure != null ? r.localFailure : r.refused;
                finishRound(r, f);
            }
        }
    }

    /** The round got its last reply (or failed): completes it unless it was abandoned, and moves past it. */
    private void finishRound(Round r, Throwable failure) {
        head = r;
        outstanding.decrementAndGet();
        if (held == r) {
            held = null;
            r.complete(failure);
        }
    }

    /** Fails every round still waiting, with the cause the connection broke with. Reader only, at its end. */
    private void failAll() {
        appendLock.lock(); // after it, no round is queued any more (broken is set)
        appendLock.unlock();
        Throwable f = cause.get();
        Throwable failure = f instanceof IOException || f instanceof RuntimeException ? f
                : new IOException("shared connection to " + peer + " failed: " + f, f);
        Round r;
        while ((r = head.next()) != null) {
            head = r;
            outstanding.decrementAndGet();
            if (r.hold()) {
                r.complete(failure);
            }
        }
        if (!retired && !transport.isClosing()) {
            LOG.log(Level.DEBUG, () -> "tcp: shared connection to " + peer + " closed: " + f);
        }
    }

    /** Marks the connection broken with {@code e} (the first cause wins), closes it and takes it off its lane. */
    private void breakWith(Throwable e) {
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
