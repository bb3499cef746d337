package io.rdma4j.spark;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Frees a resource exactly once, when its owner has closed it and no holder uses it any more: the
 * owner's reference counts as one hold until {@link #close()}, each {@link #hold()} as one more
 * until its {@link #unhold()}.
 */
final class Holds {

    /** What freeing the resource does. */
    interface Free {
        void run() throws Exception;
    }

    private final AtomicInteger count = new AtomicInteger(1);
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Free free;

    Holds(Free free) {
        this.free = free;
    }

    /** @return whether the hold was taken: false once the resource was freed (do not touch it) */
    boolean hold() {
        for (int n = count.get(); n > 0; n = count.get()) {
            if (count.compareAndSet(n, n + 1)) {
                return true;
            }
        }
        return false;
    }

    /** Ends a hold taken with {@link #hold()}; the last one after {@link #close()} frees the resource. */
    void unhold() throws Exception {
        if (count.decrementAndGet() == 0) {
            free.run();
        }
    }

    /** Ends the owner's reference (idempotent): frees the resource now, or when the last hold ends. */
    void close() throws Exception {
        if (closed.compareAndSet(false, true)) {
            unhold();
        }
    }
}
