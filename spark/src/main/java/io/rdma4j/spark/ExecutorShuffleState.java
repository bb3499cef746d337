package io.rdma4j.spark;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
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
 * <p>Ownership: a map output is registered either as a private mapping of Spark's committed data
 * file ({@link RdmaShuffleConf.MapOutputs#MAPPED}: an arena of this class's, registered with
 * {@link RdmaManager#register}) or as a copy of it in memory from {@link RdmaManager#allocate(long)}
 * ({@link RdmaShuffleConf.MapOutputs#COPIED}); either is released by a later publication of the same
 * map id, by {@link #unregister(int)} and by {@link #close()}, which also closes the manager. Staging buffers
 * ({@link StagingBuffers}) are freed by {@link #close()}.
 */
final class ExecutorShuffleState implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ExecutorShuffleState.class.getName());
    private static final Object LOOKUP_LOCK = new Object();
    /** Runs the publish answer's callback on the thread that completes it (it only logs). */
    private static final scala.concurrent.ExecutionContext ON_COMPLETION =
            scala.concurrent.ExecutionContext.fromExecutor(Runnable::run);

    private final RdmaShuffleConf conf;
    private final String executorId;
    private final IndexShuffleBlockResolver resolver;
    private final Supplier<RpcEndpointRef> registry;
    private final Map<Integer, Map<Long, OwnedOutput>> owned = new ConcurrentHashMap<>();
    private final Map<Integer, Map<Long, MapOutputToken>> tokens = new ConcurrentHashMap<>();
    private final StagingBuffers stagingBuffers;
    private final LongAdder published = new LongAdder();
    private final LongAdder registerNanos = new LongAdder();
    private final LongAdder copyNanos = new LongAdder();
    private final LongAdder askNanos = new LongAdder();
    private volatile RdmaManager manager;
    private volatile byte[] accumulators;
    private volatile boolean closed;
    /** Whether a read-only mapping was declined by a transport: map outputs are mapped privately since ({@link #map}). */
    private volatile boolean privateMappings;

    ExecutorShuffleState(RdmaShuffleConf conf, String executorId, IndexShuffleBlockResolver resolver,
                         Supplier<RpcEndpointRef> registry) {
        this.conf = conf;
        this.executorId = executorId;
        this.resolver = resolver;
        this.registry = registry;
        this.stagingBuffers = new StagingBuffers(conf.fetchBufferSize());
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
     * Registers a committed map output and publishes its token to the driver, without waiting for
     * the driver's answer.
     *
     * <p>Why the answer is not awaited: the publish message leaves before the task's
     * {@code MapStatus} on the same connection to the driver (Spark's RPC keeps one ordered outbox
     * per peer), so it reaches the registry's inbox first. The registry and the scheduler handle
     * their inboxes on different threads, so that is not a guarantee that the token is there
     * before the {@code MapOutputTracker} knows the output; but the status still passes the task
     * result getter and the DAG scheduler, and a reducer that misses a token asks again
     * ({@link #token}). If the driver refuses or never gets it, the failure is logged and the
     * reducers meet the map output as unknown to the registry: a fetch failure, after which Spark
     * runs the map task again.
     *
     * @param lengths the partition lengths the writer reports
     * @throws IOException when the data file cannot be read, mapped or registered, or is shorter
     *                     than the lengths say; nothing stays registered then
     */
    void publish(int shuffleId, long mapId, long[] lengths) throws IOException {
        long[] offsets = MapOutputToken.offsetsOf(lengths);
        long total = offsets[lengths.length];
        OwnedOutput registered = null;
        long t0 = System.nanoTime();
        long t1 = t0;
        long t2 = t0;
        if (total > 0) {
            File file = resolver.getDataFile(shuffleId, mapId);
            if (conf.mapOutputs() == RdmaShuffleConf.MapOutputs.MAPPED) {
                registered = map(file, total);
                t1 = System.nanoTime();
                t2 = t1;
            } else {
                RdmaBuffer buffer = await(manager().allocate(total), "allocate " + total + " B");
                t1 = System.nanoTime();
                try {
                    copyFile(file, buffer.segment());
                } catch (IOException | RuntimeException e) {
                    buffer.close();
                    throw e;
                }
                registered = new OwnedOutput(manager(), buffer.segment(), buffer.remote(), buffer);
                t2 = System.nanoTime();
            }
        }
        MapOutputToken output = new MapOutputToken(mapId, executorId, registered == null ? null
                : registered.remote().toBytes(), offsets);
        Map<Long, OwnedOutput> byMap = owned.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>());
        OwnedOutput replaced = registered != null ? byMap.put(mapId, registered) : byMap.remove(mapId);
        tokens.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).put(mapId, output);
        try {
            registry.get().ask(new RegistryMessages.Publish(shuffleId, output), classTag(Boolean.class))
                    .onComplete(result -> {
                        if (result.isFailure()) {
                            LOG.log(System.Logger.Level.WARNING, "rdma4j: the driver did not take shuffle " + shuffleId
                                    + " map output " + mapId + ": reducers will meet it as a fetch failure and Spark "
                                    + "will run the map task again", result.failed().get());
                        }
                        return null;
                    }, ON_COMPLETION);
        } catch (RuntimeException e) {
            forget(shuffleId, mapId);
            throw e;
        } finally {
            if (replaced != null) {
                // the same map id published again (a re-run map task with spark.shuffle.useOldFetchProtocol,
                // where the map id is the map index): the older output's token dies here, after the new
                // token left; its local readers keep it until they end (OwnedOutput.hold), holders of its
                // token meet a released buffer and ask the driver for the new one (BlockFetcher)
                closeQuietly(shuffleId, replaced);
            }
        }
        long t3 = System.nanoTime();
        published.increment();
        registerNanos.add(t1 - t0);
        copyNanos.add(t2 - t1);
        askNanos.add(t3 - t2);
        long register = t1 - t0;
        long copy = t2 - t1;
        long ask = t3 - t2;
        LOG.log(System.Logger.Level.DEBUG, () -> "shuffle " + shuffleId + " map output " + mapId + " (" + total
                + " B, " + conf.mapOutputs() + ") published: register " + register / 1000 + " us, copy "
                + copy / 1000 + " us, publish " + ask / 1000 + " us");
    }

    /** Undoes a publication that failed before it left: forgets the token, releases the output. */
    private void forget(int shuffleId, long mapId) {
        Map<Long, MapOutputToken> byMapToken = tokens.get(shuffleId);
        if (byMapToken != null) {
            byMapToken.remove(mapId);
        }
        Map<Long, OwnedOutput> byMap = owned.get(shuffleId);
        OwnedOutput o = byMap == null ? null : byMap.remove(mapId);
        if (o != null) {
            closeQuietly(shuffleId, o);
        }
    }

    /**
     * The committed data file's first {@code total} bytes, mapped read-only into an arena of its
     * own, and registered read-only: the token says so, peers can only read it, and every
     * transport refuses a remote write on this process's side whatever a token claims.
     *
     * <p>A transport that cannot register the read-only mapping's {@code PROT_READ} pages
     * declines it (verbs on Linux before 6.2, which pins every region for writing): the token then
     * lacks that transport. From then on this executor maps its outputs privately (copy-on-write,
     * which every transport registers; verbs at the price of a copy of each page) and registers
     * them read-only all the same, as a read-only view.
     *
     * <p>Why this is safe for Spark's file: Spark never changes a committed data file in place. A
     * later attempt of the same map commits by renaming a new file over it, cleanup deletes it;
     * either way the mapped file (the inode) stays whole until the mapping is unmapped. The
     * mapping is the page cache's pages: no copy, no memory of its own. Something outside Spark
     * truncating the file would make the lost pages unreadable: reads by peers then fail (a fetch
     * failure), a read in this process throws {@link InternalError}.
     */
    private OwnedOutput map(File file, long total) throws IOException {
        if (!privateMappings) {
            OwnedOutput shared = map(file, total, FileChannel.MapMode.READ_ONLY);
            if (shared.remote().transports().containsAll(manager().transports())) {
                return shared;
            }
            privateMappings = true;
            LOG.log(System.Logger.Level.INFO, "rdma4j shuffle on executor " + executorId + ": a read-only mapping of a map "
                    + "output is not registrable with every transport (its token offers " + shared.remote().transports()
                    + " of " + manager().transports() + "; verbs on Linux before 6.2 cannot pin read-only pages): map "
                    + "outputs are mapped privately (copy-on-write) from now on, and still registered read-only");
            closeQuietly(-1, shared);
        }
        return map(file, total, FileChannel.MapMode.PRIVATE);
    }

    /** {@link #map(File, long)} with a mapping of {@code mode}, viewed read-only and registered so. */
    private OwnedOutput map(File file, long total, FileChannel.MapMode mode) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment segment;
            // MapMode.PRIVATE needs a channel open for writing; nothing is written through the mapping
            try (FileChannel channel = mode == FileChannel.MapMode.READ_ONLY ? FileChannel.open(file.toPath(), StandardOpenOption.READ)
                    : FileChannel.open(file.toPath(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                if (channel.size() < total) {
                    throw new IOException("shuffle data file " + file + " holds " + channel.size()
                            + " B, the partition lengths say " + total);
                }
                segment = channel.map(mode, 0, total, arena).asReadOnly();     // a read-only registration
            }
            RdmaRemoteBuffer remote = await(manager().register(segment), "register " + total + " B of " + file);
            return new OwnedOutput(manager(), segment, remote, arena);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * What this process's publications took so far, for benchmarks: {map outputs published,
     * nanoseconds mapping and registering (or waiting for the allocation), copying data files
     * (copied outputs only), handing the token to the driver (the task does not wait for its answer)}.
     */
    long[] publishTimes() {
        return new long[] {published.sum(), registerNanos.sum(), copyNanos.sum(), askNanos.sum()};
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
        Map<Long, OwnedOutput> byMap = owned.get(shuffleId);
        return byMap == null ? 0 : byMap.size();
    }

    /** @return how many of this process's buffers of the shuffle are file mappings */
    int mappedCount(int shuffleId) {
        Map<Long, OwnedOutput> byMap = owned.get(shuffleId);
        return byMap == null ? 0 : (int) byMap.values().stream().filter(b -> b.segment().isMapped()).count();
    }

    /** @return how many of this process's buffers of the shuffle are registered read-only */
    int readOnlyCount(int shuffleId) {
        Map<Long, OwnedOutput> byMap = owned.get(shuffleId);
        return byMap == null ? 0 : (int) byMap.values().stream().filter(b -> b.remote().isReadOnly()).count();
    }

    /** @return a map output this process wrote and registered, or null */
    OwnedOutput ownedOutput(int shuffleId, long mapId) {
        Map<Long, OwnedOutput> byMap = owned.get(shuffleId);
        return byMap == null ? null : byMap.get(mapId);
    }

    /**
     * A map output this process wrote and registered, held for a local reader: its memory stays
     * valid until the reader calls {@link OwnedOutput#unhold()}, even if the output is replaced or
     * unregistered meanwhile.
     *
     * @return the output, held, or null when this process has none under that map id
     */
    OwnedOutput holdOwnedOutput(int shuffleId, long mapId) {
        while (true) {
            OwnedOutput o = ownedOutput(shuffleId, mapId);
            if (o == null || o.hold()) {
                return o;
            }
            // freed between the lookup and the hold: a replacement is (or was) in the map
            if (ownedOutput(shuffleId, mapId) == o) {
                return null;
            }
        }
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
     * After a read with a cached token failed: forgets that token (unless another replaced it in
     * the cache meanwhile) and looks the map output up again, so a map output published anew
     * under the same map id (its older buffer released) is read with its new token.
     *
     * @return the output the driver knows now (possibly the same token), or null when it knows none
     */
    MapOutputToken refreshToken(int shuffleId, long mapId, MapOutputToken failed) {
        Map<Long, MapOutputToken> byMap = tokens.get(shuffleId);
        if (byMap != null) {
            byMap.remove(mapId, failed);
        }
        return token(shuffleId, mapId);
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

    /** @return a staging buffer for {@code bytes}, see {@link StagingBuffers#take(long)} */
    MemorySegment takeStaging(long bytes) {
        return stagingBuffers.take(bytes);
    }

    /** Gives a staging buffer back once no transport touches it any more. */
    void returnStaging(MemorySegment buffer) {
        stagingBuffers.give(buffer);
    }

    /** @return bytes of staging memory this process allocated so far (reused buffers count once) */
    long stagingBytesAllocated() {
        return stagingBuffers.allocatedBytes();
    }

    /**
     * Releases this process's buffers of a shuffle and forgets its tokens.
     *
     * @return how many buffers were released
     */
    int unregister(int shuffleId) {
        tokens.remove(shuffleId);
        Map<Long, OwnedOutput> byMap = owned.remove(shuffleId);
        if (byMap == null) {
            return 0;
        }
        int released = 0;
        for (OwnedOutput output : byMap.values()) {
            closeQuietly(shuffleId, output);
            released++;
        }
        return released;
    }

    private static void closeQuietly(int shuffleId, OwnedOutput output) {
        try {
            output.close();
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "releasing shuffle " + shuffleId + " buffer " + output.remote().id()
                    + " failed (its memory is freed anyway)", e);
        }
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
        stagingBuffers.close();
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
