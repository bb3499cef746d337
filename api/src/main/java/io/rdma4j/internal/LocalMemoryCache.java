package io.rdma4j.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Transport;

import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One transport's prepared local memory ({@link Transport#prepareLocal}), cached and bounded.
 *
 * <p>Keyed by a segment's address and size. An entry whose segment's arena was closed is never
 * handed out again: a lookup that finds one replaces it, and {@link #sweep()} drops them all (the
 * manager's {@link LocalMemorySweeper} calls it while the cache holds entries). A prepared handle
 * is closed exactly once, when it left the cache (evicted, replaced, swept, cleared) and no op uses
 * it any more.
 */
public final class LocalMemoryCache {

    private static final System.Logger LOG = System.getLogger(LocalMemoryCache.class.getName());

    private final Transport transport;
    private final Cache<Key, Entry> entries;
    private volatile Runnable onEntryAdded = () -> { };
    /**
     * The entry the last lookup handed out, while it is cached: ops on one segment in a row skip
     * the key and the cache's lookup; every {@value #RECENCY_EVERY}th of them looks it up anyway, so
     * that the cache still sees the entry used and does not evict it as idle.
     */
    private volatile Entry last;
    /** Hits on {@link #last} since it last went through the cache; racy, a rough count is enough. */
    private int lastHits;
    private static final int RECENCY_EVERY = 64;
    /** {@link #reacquire} calls; racy, a rough count is enough. */
    private int reacquired;

    /**
     * A segment's range. Not a record: a record's {@code hashCode} and {@code equals} run through
     * method handles, which the C1 compiler does not inline, and a key is built and looked up on
     * every op on memory outside the manager's registrations.
     */
    private static final class Key {
        private final long address;
        private final long size;

        Key(long address, long size) {
            this.address = address;
            this.size = size;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && address == k.address && size == k.size;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(address * 31 + size);
        }
    }

    /** A cached handle and the ops using it. */
    public static final class Entry {
        private final MemorySegment segment;
        private final long address;
        private final long size;
        private final LocalMemory memory;
        /** Users plus one while cached; the handle closes when it reaches zero. */
        private final AtomicInteger refs = new AtomicInteger(1);
        /** Whether the cache still holds it; cleared when it leaves the cache (before the cache's reference goes). */
        private volatile boolean cached = true;

        private Entry(MemorySegment segment, LocalMemory memory) {
            this.segment = segment;
            this.address = segment.address();
            this.size = segment.byteSize();
            this.memory = memory;
        }

        /** The prepared handle; valid until {@link #release()}. */
        public LocalMemory memory() {
            return memory;
        }

        private boolean acquire() {
            while (true) {
                int n = refs.get();
                if (n == 0) {
                    return false;
                }
                if (refs.compareAndSet(n, n + 1)) {
                    return true;
                }
            }
        }

        /** Ends one use (or the cache's own reference); the last one closes the handle. */
        public void release() {
            if (refs.decrementAndGet() == 0) {
                try {
                    memory.close();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "closing prepared local memory failed", e);
                }
            }
        }
    }

    /**
     * An empty cache.
     *
     * @param transport  the transport whose {@link Transport#prepareLocal} fills it
     * @param maxEntries the most handles kept; more evict the least recently used
     */
    public LocalMemoryCache(Transport transport, long maxEntries) {
        this.transport = transport;
        this.entries = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .executor(Runnable::run)
                .removalListener((Key k, Entry e, RemovalCause cause) -> {
                    if (e != null) {
                        e.cached = false;
                        if (last == e) {
                            last = null;
                        }
                        e.release();
                    }
                })
                .build();
    }

    /**
     * The prepared handle for {@code segment}, preparing it on first use; the caller must
     * {@link Entry#release()} it once the op completed.
     *
     * @param segment a caller's native, shared, alive segment
     * @return the acquired entry
     * @throws Exception what {@link Transport#prepareLocal} threw
     */
    public Entry acquire(MemorySegment segment) throws Exception {
        Entry l = last;
        if (l != null && l.address == segment.address() && l.size == segment.byteSize() && ++lastHits % RECENCY_EVERY != 0
                && l.segment.scope().isAlive() && l.acquire()) {
            return l;
        }
        Key key = new Key(segment.address(), segment.byteSize());
        while (true) {
            Entry e = entries.getIfPresent(key);
            if (e != null && !e.segment.scope().isAlive()) {
                entries.asMap().remove(key, e);
                e = null;
            }
            if (e == null) {
                LocalMemory prepared = transport.prepareLocal(segment);
                if (prepared == null) {
                    throw new IllegalStateException(transport.name() + " says it prepares local memory but prepared none");
                }
                Entry fresh = new Entry(segment, prepared);
                Entry raced = entries.asMap().putIfAbsent(key, fresh);
                if (raced != null) {
                    fresh.release(); // another thread prepared the same memory first: use theirs
                    e = raced;
                } else {
                    e = fresh;
                    onEntryAdded.run();
                }
            }
            if (e.acquire()) {
                last = e;
                lastHits = 0;
                return e;
            }
        }
    }

    /**
     * Takes {@code entry}, handed out by {@link #acquire} before, once more for another op on the
     * same memory, without a lookup, while it is still cached and its segment's arena is open
     * (every {@value #RECENCY_EVERY}th time the cache sees it used, so that it does not evict it as
     * idle). The caller must {@link Entry#release()} it once the op completed.
     *
     * @return false, taking nothing, when it left the cache (evicted, swept, cleared) or its arena closed:
     *         look the memory up again with {@link #acquire}
     */
    public boolean reacquire(Entry entry) {
        if (!entry.cached || !entry.segment.scope().isAlive() || !entry.acquire()) {
            return false;
        }
        if (++reacquired % RECENCY_EVERY == 0) {
            entries.getIfPresent(new Key(entry.address, entry.size));
        }
        return true;
    }

    /**
     * Runs {@code listener} each time this cache gains an entry, on the thread that prepared it
     * (after {@link Transport#prepareLocal}, so rarely); it must be short and must not throw.
     *
     * @param listener replaces the previous one
     */
    public void onEntryAdded(Runnable listener) {
        onEntryAdded = Objects.requireNonNull(listener, "listener");
    }

    /**
     * Drops every entry whose segment's arena was closed.
     *
     * @return how many it dropped
     */
    public int sweep() {
        int dropped = 0;
        for (Map.Entry<Key, Entry> en : entries.asMap().entrySet()) {
            if (!en.getValue().segment.scope().isAlive() && entries.asMap().remove(en.getKey(), en.getValue())) {
                dropped++;
            }
        }
        entries.cleanUp();
        return dropped;
    }

    /** How many handles are cached. */
    public long size() {
        entries.cleanUp();
        return entries.estimatedSize();
    }

    /** Drops every entry (handles in use close when their last op ends). */
    public void clear() {
        last = null;
        entries.invalidateAll();
        entries.cleanUp();
    }
}
