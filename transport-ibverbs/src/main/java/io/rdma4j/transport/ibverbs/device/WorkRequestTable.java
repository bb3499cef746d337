package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.posting.Chunk;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The chunks posted on one device and not yet completed, by work request id: what a completion's
 * {@code wr_id} is looked up in. An array of slots, twice as many as chunks may be tracked at once
 * (each holds a completion-queue entry, so at most the queue's size), indexed by the id's low bits:
 * adding and taking one are a compare-and-set each, with no boxed key and no hashing, which a
 * hash map cost on every op. Ids count up from 1 (0 and -1 mean "not posted" and "already failed"
 * to {@link VerbsConnection}); an id whose slot is taken by a chunk still in flight is skipped.
 *
 * <p>Thread-safe. A chunk's {@link Chunk#workRequestId} is set before its slot is
 * published, so the thread that takes its completion reads it.
 */
final class WorkRequestTable {

    private final AtomicReferenceArray<Chunk> slots;
    private final int mask;
    private final AtomicLong nextId = new AtomicLong(1);
    /** Chunks tracked now. */
    private final AtomicInteger tracked = new AtomicInteger();

    /** @param tracked the most chunks tracked at once (the completion queue's size) */
    WorkRequestTable(int tracked) {
        int size = Integer.highestOneBit(2 * Math.clamp(tracked, 1, 1 << 28) - 1) << 1;     // a power of two, at least 2 x tracked
        slots = new AtomicReferenceArray<>(size);
        mask = size - 1;
    }

    /**
     * Gives {@code chunk} a new id ({@link Chunk#workRequestId}) and tracks it.
     *
     * @return the id
     * @throws IllegalStateException when every slot is taken: more chunks than promised are in flight
     */
    long add(Chunk chunk) {
        for (int tries = 0; tries <= mask; tries++) {
            long id = nextId.getAndIncrement();
            int slot = (int) id & mask;
            if (slots.get(slot) == null) {
                chunk.workRequestId = id;
                if (slots.compareAndSet(slot, null, chunk)) {
                    tracked.incrementAndGet();
                    return id;
                }
            }
        }
        throw new IllegalStateException("all " + slots.length() + " work request slots are taken");
    }

    /**
     * Stops tracking the chunk of {@code id}.
     *
     * @return it, or null when no chunk of that id is tracked (never added, taken already, or failed by close)
     */
    Chunk take(long id) {
        int slot = (int) id & mask;
        Chunk c = slots.get(slot);
        if (c != null && c.workRequestId == id && slots.compareAndSet(slot, c, null)) {
            tracked.decrementAndGet();
            return c;
        }
        return null;
    }

    /** How many chunks are tracked now: posted and not yet taken (a moment's figure under concurrent use). */
    int size() {
        return tracked.get();
    }

    /** Takes every tracked chunk that {@code which} accepts and hands it to {@code action}. */
    void takeIf(Predicate<Chunk> which, Consumer<Chunk> action) {
        for (int i = 0; i < slots.length(); i++) {
            Chunk c = slots.get(i);
            if (c != null && which.test(c) && slots.compareAndSet(i, c, null)) {
                tracked.decrementAndGet();
                action.accept(c);
            }
        }
    }

    /** Takes every tracked chunk and hands it to {@code action}. */
    void takeAll(Consumer<Chunk> action) {
        for (int i = 0; i < slots.length(); i++) {
            Chunk c = slots.getAndSet(i, null);
            if (c != null) {
                tracked.decrementAndGet();
                action.accept(c);
            }
        }
    }
}
