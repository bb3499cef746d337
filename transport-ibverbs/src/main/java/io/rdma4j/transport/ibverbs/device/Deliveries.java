package io.rdma4j.transport.ibverbs.device;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The batches of completions that the threads of one {@link VerbsDevice} are delivering. A poll
 * nested in a delivery (a dependent stage that waits for an op, or cancels one and waits for its
 * flush) first delivers the rest of the batches its thread is delivering further up its stack
 * ({@link #deliverRestOfBatches}), since no poll of the queue brings a completion that an outer
 * frame of the same thread took off it already.
 *
 * <p>Thread-safe: each thread sees only its own batches.
 */
final class Deliveries {

    /** Per thread, the batches of completions it is delivering, innermost first. */
    private final ThreadLocal<ArrayDeque<CompletionBatch>> batches = ThreadLocal.withInitial(ArrayDeque::new);
    /** Batches being delivered by any thread: while none is, a poll skips the look at {@link #batches}. */
    private final AtomicInteger batchesDelivering = new AtomicInteger();

    /** Delivers {@code b} on this thread, where a nested poll finds what is left of it. */
    void deliver(CompletionBatch b) {
        ArrayDeque<CompletionBatch> mine = batches.get();
        mine.push(b);
        batchesDelivering.incrementAndGet();
        try {
            b.deliverRest();
        } finally {
            batchesDelivering.decrementAndGet();
            mine.pop();
        }
    }

    /**
     * Delivers, on this thread, what is left of the batches it is delivering further up its stack,
     * the oldest first; looks at none while no thread delivers any.
     *
     * @return completions delivered
     */
    int deliverRestOfBatches() {
        if (batchesDelivering.get() == 0) {
            return 0;
        }
        int n = 0;
        for (var outermostFirst = batches.get().descendingIterator(); outermostFirst.hasNext(); ) {
            n += outermostFirst.next().deliverRest();
        }
        return n;
    }
}
