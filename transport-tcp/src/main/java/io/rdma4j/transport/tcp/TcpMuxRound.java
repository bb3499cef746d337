package io.rdma4j.transport.tcp;

import io.rdma4j.spi.TransportOp;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * One round of a submit's ops, in flight on a shared connection ({@link TcpMux}): written by its
 * caller, answered by the connection's reader ({@link TcpMuxReader}). Its state is also a short
 * lock; see {@link TcpMux} ("Rounds and memory").
 */
final class TcpMuxRound {
    static final int PENDING = 0;
    static final int BUSY = 1;
    static final int DONE = 2;
    static final int ABANDONED = 3;
    private static final VarHandle STATE;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            STATE = lookup.findVarHandle(TcpMuxRound.class, "state", int.class);
            NEXT = lookup.findVarHandle(TcpMuxRound.class, "next", TcpMuxRound.class);
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
    private volatile TcpMuxRound next;
    /** Reader only: the op whose reply comes next, the first refusal, a local failure. */
    int replyAt;
    TcpRefusedException refused;
    RuntimeException localFailure;
    /** Why the round failed, written before DONE; null on success. */
    private Throwable failure;

    TcpMuxRound(List<TransportOp> ops, TcpTransport.Target[] targets, int from, int to, Thread waiter) {
        this.ops = ops;
        this.targets = targets;
        this.from = from;
        this.to = to;
        this.waiter = waiter;
        this.replyAt = from;
    }

    TcpMuxRound next() {
        return (TcpMuxRound) NEXT.getVolatile(this);
    }

    /** Makes {@code r} the round written after this one (under the mux's append lock); the reader may look from then on. */
    void link(TcpMuxRound r) {
        NEXT.setVolatile(this, r);
    }

    /** The state: {@link #PENDING}, {@link #BUSY}, {@link #DONE} or {@link #ABANDONED} (a volatile read). */
    int state() {
        return state;
    }

    /** Why the round failed, once {@link #state()} is {@link #DONE}; null on success. */
    Throwable failure() {
        return failure;
    }

    /** PENDING to BUSY; false when the round was abandoned or is done. */
    boolean hold() {
        return STATE.compareAndSet(this, PENDING, BUSY);
    }

    /** BUSY back to PENDING. */
    void release() {
        state = PENDING;
    }

    /** BUSY (held by the caller) to DONE with {@code failure}, and wakes the caller. */
    void complete(Throwable failure) {
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
