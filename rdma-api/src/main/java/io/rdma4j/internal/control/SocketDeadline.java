package io.rdma4j.internal.control;

import io.rdma4j.spi.Deadline;

import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Closes a socket when a deadline passes, unless disarmed first. This bounds a whole exchange,
 * reads and writes alike, whatever the peer does: a per-read socket timeout alone lets a peer
 * that sends one byte at a time stretch an exchange without end, and does not bound writes at all.
 * The thread blocked on the socket wakes with an exception; {@link #fired()} tells a timeout
 * from other failures.
 *
 * <p>Each guard waits on its own virtual thread, parked until the deadline or the disarm.
 */
final class SocketDeadline implements AutoCloseable {

    private static final int ARMED = 0;
    private static final int DISARMED = 1;
    private static final int FIRED = 2;

    private final AtomicInteger state = new AtomicInteger(ARMED);
    private final Thread waiter;

    private SocketDeadline(Deadline deadline, Socket socket) {
        this.waiter = Thread.ofVirtual().name("rdma4j-control-deadline").unstarted(() -> {
            long left;
            while (state.get() == ARMED && (left = deadline.remainingNanos()) > 0) {
                LockSupport.parkNanos(this, left);
            }
            if (state.compareAndSet(ARMED, FIRED)) {
                try {
                    socket.close();
                } catch (IOException ignored) {
                    // the descriptor is released either way
                }
            }
        });
    }

    /** Arms a guard that closes {@code socket} at {@code deadline}. */
    static SocketDeadline closeAt(Deadline deadline, Socket socket) {
        SocketDeadline guard = new SocketDeadline(deadline, socket);
        guard.waiter.start();
        return guard;
    }

    /**
     * Cancels the close.
     *
     * @return {@code true} if the socket will not be closed by this guard; {@code false} if it was
     */
    boolean disarm() {
        if (state.compareAndSet(ARMED, DISARMED)) {
            LockSupport.unpark(waiter);
            return true;
        }
        return state.get() == DISARMED;
    }

    /** Whether the deadline passed and the socket was closed. */
    boolean fired() {
        return state.get() == FIRED;
    }

    /** Same as {@link #disarm()}. */
    @Override
    public void close() {
        disarm();
    }
}
