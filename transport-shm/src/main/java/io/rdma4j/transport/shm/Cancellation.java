package io.rdma4j.transport.shm;

import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Stops an op between two pieces of its copy. Pieces may run on several threads at once (a
 * large op split across threads); {@link #cancel()} returns only once every piece in flight (one
 * system call or memory copy of at most one chunk each) has ended, so that after it nothing more
 * is written into or read from the caller's local memory.
 */
class Cancellation {

    /** For ops nobody can cancel ({@code submitAndWait}): never stops, never locks. */
    static final Cancellation NONE = new Cancellation() {
        @Override
        boolean begin() {
            return true;
        }

        @Override
        void end() {
        }

        @Override
        void cancel() {
            throw new UnsupportedOperationException("NONE cannot be cancelled");
        }
    };

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private volatile boolean cancelled;

    /**
     * Before a piece: false when cancelled (the piece must not run); otherwise true, and
     * {@link #end()} must follow the piece on the same thread.
     */
    boolean begin() {
        lock.readLock().lock();
        if (cancelled) {
            lock.readLock().unlock();
            return false;
        }
        return true;
    }

    /** After a piece that {@link #begin()} allowed, on the same thread. */
    void end() {
        lock.readLock().unlock();
    }

    /** No piece starts after this returns, and those in flight have ended. Idempotent. */
    void cancel() {
        cancelled = true;
        lock.writeLock().lock();
        lock.writeLock().unlock();
    }
}
