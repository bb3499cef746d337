package io.rdma4j.spark;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.util.LongAccumulator;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * What one process (an executor, or the driver in local mode) keeps for the rdma4j shuffle: its
 * {@link RdmaManager}, the buffers holding its map outputs, the tokens it looked up, and the
 * reused staging buffers its reducers read into.
 *
 * <p>Ownership: the buffers of map outputs come from {@link RdmaManager#allocate(long)} (memory the
 * manager owns: on the same host a reader maps it directly, whatever the ptrace policy) and hold a
 * copy of the committed data file; they are released by {@link #unregister(int)} and by
 * {@link #close()}, which also closes the manager. Staging buffers live in one shared arena
 * closed by {@link #close()}.
 */
final class ExecutorShuffleState implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ExecutorShuffleState.class.getName());
    private static final Object LOOKUP_LOCK = new Object();

    private final RdmaShuffleConf conf;
    private final String executorId;
    private final IndexShuffleBlockResolver resolver;
    private final Supplier<RpcEndpointRef> registry;
    private final Map<Integer, Map<Long, RdmaBuffer>> owned = new ConcurrentHashMap<>();
    private final Map<Integer, Map<Long, MapOutputToken>> tokens = new ConcurrentHashMap<>();
    private final ConcurrentLinkedDeque<MemorySegment> staging = new ConcurrentLinkedDeque<>();
    private final Arena stagingArena = Arena.ofShared();
    private final LongAdder published = new LongAdder();
    private final LongAdder allocateNanos = new LongAdder();
    private final LongAdder copyNanos = new LongAdder();
    private final LongAdder askNanos = new LongAdder();
    private volatile RdmaManager manager;
    private volatile byte[] accumulators;
    private volatile boolean closed;

    ExecutorShuffleState(RdmaShuffleConf conf, String executorId, IndexShuffleBlockResolver resolver,
                         Supplier<RpcEndpointRef> registry) {
        this.conf = conf;
        this.executorId = executorId;
        this.resolver = resolver;
        this.registry = registry;
    }

    RdmaShuffleConf conf() {
        return conf;
    }

    String executorId() {
        return executorId;
    }

    /** @return this process's manager, started on first use */
    RdmaManager manager() {
        RdmaManager m = manager;
        if (m == null) {
            synchronized (this) {
                if (closed) {
                    throw new IllegalStateException("rdma4j shuffle state of executor " + executorId + " is closed");
                }
                m = manager;
                if (m == null) {
                    m = conf.buildManager();
                    LOG.log(System.Logger.Level.INFO, "rdma4j shuffle on executor " + executorId
                            + ": transports " + m.transports());
                    manager = m;
                }
            }
        }
        return m;
    }

    /**
     * Registers a committed map output and publishes its token to the driver.
     *
     * @param lengths the partition lengths the writer reports
     * @throws IOException when the data file cannot be read or is shorter than the lengths say
     */
    void publish(int shuffleId, long mapId, long[] lengths) throws IOException {
        long[] offsets = MapOutputToken.offsetsOf(lengths);
        long total = offsets[lengths.length];
        RdmaBuffer buffer = null;
        byte[] token = null;
        long t0 = System.nanoTime();
        long t1 = t0;
        long t2 = t0;
        if (total > 0) {
            buffer = await(manager().allocate(total), "allocate " + total + " B");
            t1 = System.nanoTime();
            try {
                copyFile(resolver.getDataFile(shuffleId, mapId), buffer.segment());
                token = buffer.remote().toBytes();
            } catch (IOException | RuntimeException e) {
                buffer.close();
                throw e;
            }
            t2 = System.nanoTime();
        }
        MapOutputToken output = new MapOutputToken(mapId, executorId, token, offsets);
        try {
            registry.get().askSync(new RegistryMessages.Publish(shuffleId, output), classTag(Boolean.class));
        } catch (RuntimeException e) {
            if (buffer != null) {
                buffer.close();
            }
            throw e;
        }
        long t3 = System.nanoTime();
        published.increment();
        allocateNanos.add(t1 - t0);
        copyNanos.add(t2 - t1);
        askNanos.add(t3 - t2);
        long allocate = t1 - t0;
        long copy = t2 - t1;
        long ask = t3 - t2;
        LOG.log(System.Logger.Level.DEBUG, () -> "shuffle " + shuffleId + " map output " + mapId + " (" + total
                + " B) published: allocate " + allocate / 1000 + " us, copy " + copy / 1000 + " us, publish ask "
                + ask / 1000 + " us");
        if (buffer != null) {
            owned.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).put(mapId, buffer);
        }
        tokens.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).put(mapId, output);
    }

    /**
     * What this process's publications took so far, for benchmarks: {map outputs published,
     * nanoseconds waiting for allocations, copying data files, waiting for the driver's answer}.
     */
    long[] publishTimes() {
        return new long[] {published.sum(), allocateNanos.sum(), copyNanos.sum(), askNanos.sum()};
    }

    private static void copyFile(File file, MemorySegment target) throws IOException {
        try (FileChannel channel = FileChannel.open(file.toPath(), StandardOpenOption.READ)) {
            if (channel.size() < target.byteSize()) {
                throw new IOException("shuffle data file " + file + " holds " + channel.size()
                        + " B, the partition lengths say " + target.byteSize());
            }
            long position = 0;
            while (position < target.byteSize()) {
                long piece = Math.min(target.byteSize() - position, 1L << 30);
                ByteBuffer window = target.asSlice(position, piece).asByteBuffer();
                while (window.hasRemaining()) {
                    if (channel.read(window, position + window.position()) < 0) {
                        throw new IOException("shuffle data file " + file + " ended at " + (position + window.position()));
                    }
                }
                position += piece;
            }
        }
    }

    /** @return how many buffers this process holds for the shuffle */
    int ownedCount(int shuffleId) {
        Map<Long, RdmaBuffer> byMap = owned.get(shuffleId);
        return byMap == null ? 0 : byMap.size();
    }

    /** @return the buffer holding a map output this process wrote, or null */
    RdmaBuffer ownedBuffer(int shuffleId, long mapId) {
        Map<Long, RdmaBuffer> byMap = owned.get(shuffleId);
        return byMap == null ? null : byMap.get(mapId);
    }

    /**
     * The published output of a map task: from the cache, else asked from the driver (which
     * answers with every output of the shuffle, cached for the next tasks).
     *
     * @return the output, or null when the driver does not know it
     */
    MapOutputToken token(int shuffleId, long mapId) {
        Map<Long, MapOutputToken> byMap = tokens.get(shuffleId);
        MapOutputToken output = byMap == null ? null : byMap.get(mapId);
        if (output != null) {
            return output;
        }
        synchronized (LOOKUP_LOCK) {
            byMap = tokens.get(shuffleId);
            output = byMap == null ? null : byMap.get(mapId);
            if (output == null) {
                @SuppressWarnings("unchecked")
                HashMap<Long, MapOutputToken> all = (HashMap<Long, MapOutputToken>) registry.get()
                        .askSync(new RegistryMessages.Lookup(shuffleId), classTag(HashMap.class));
                tokens.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).putAll(all);
                output = all.get(mapId);
            }
        }
        return output;
    }

    /**
     * The calling reduce task's own {@link RouteMetrics} accumulators, registered with it; the
     * driver's are asked for once per process.
     */
    Map<String, LongAccumulator[]> routeAccumulators() {
        byte[] serialized = accumulators;
        if (serialized == null) {
            serialized = registry.get().askSync(new RegistryMessages.Accumulators(), classTag(byte[].class));
            accumulators = serialized;
        }
        return RouteMetrics.forTask(serialized);
    }

    /** @return a staging buffer of {@link RdmaShuffleConf#fetchBufferSize()} bytes, reused */
    MemorySegment takeStaging() {
        MemorySegment segment = staging.pollFirst();
        if (segment != null) {
            return segment;
        }
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("rdma4j shuffle state of executor " + executorId + " is closed");
            }
            return stagingArena.allocate(conf.fetchBufferSize(), 64);
        }
    }

    /** Returns a staging buffer once no transport touches it any more. */
    void returnStaging(MemorySegment segment) {
        if (!closed) {
            staging.addFirst(segment);
        }
    }

    /**
     * Releases this process's buffers of a shuffle and forgets its tokens.
     *
     * @return how many buffers were released
     */
    int unregister(int shuffleId) {
        tokens.remove(shuffleId);
        Map<Long, RdmaBuffer> byMap = owned.remove(shuffleId);
        if (byMap == null) {
            return 0;
        }
        int released = 0;
        for (RdmaBuffer buffer : byMap.values()) {
            try {
                buffer.close();
                released++;
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "releasing shuffle " + shuffleId + " buffer " + buffer.id()
                        + " failed (it is released anyway)", e);
            }
        }
        return released;
    }

    /** Releases every buffer, closes the manager and frees the staging buffers; idempotent. */
    @Override
    public void close() {
        RdmaManager m;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            m = manager;
        }
        for (Integer shuffleId : owned.keySet().toArray(Integer[]::new)) {
            unregister(shuffleId);
        }
        tokens.clear();
        if (m != null) {
            m.close();
        }
        staging.clear();
        stagingArena.close();
    }

    static <T> T await(java.util.concurrent.CompletableFuture<T> future, String what) throws IOException {
        try {
            return future.get(5, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted during " + what, e);
        } catch (ExecutionException e) {
            throw new IOException(what + " failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new IOException(what + " did not finish in 5 minutes", e);
        }
    }

    @SuppressWarnings("unchecked")
    static <T> ClassTag<T> classTag(Class<?> type) {
        return (ClassTag<T>) ClassTag$.MODULE$.apply(type);
    }
}
