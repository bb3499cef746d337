package io.rdma4j.spark;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.util.LongAccumulator;
import org.apache.spark.util.RpcUtils;

/**
 * A Spark shuffle manager whose reducers fetch map output with one-sided rdma4j reads:
 * {@code spark.shuffle.manager=io.rdma4j.spark.RdmaShuffleManager}.
 *
 * <p>Map tasks write exactly as Spark's {@link SortShuffleManager} does (its writers, its data and
 * index files); once a map output is committed, the executor maps its data file privately and
 * registers the mapping with its {@code RdmaManager} (or, with
 * {@code spark.rdma4j.shuffle.mapOutputs=copied}, copies it into memory from {@code allocate}) and
 * sends the buffer's token with the exact partition offsets to the driver's {@link TokenRegistry}
 * endpoint, before the task reports its {@code MapStatus}. A reduce task asks the {@code MapOutputTracker} which map outputs to read
 * (as the built-in reader does), looks their tokens up (once per shuffle and executor), and reads
 * its partition range of each with one-sided reads, many per action, with a deadline, into
 * reused staging memory; see {@link BlockFetcher} for failures, which become Spark's
 * {@code FetchFailedException} for the map output concerned.
 *
 * <p>{@link #unregisterShuffle(int)} (which Spark calls on the driver and on every executor when a
 * shuffle is cleaned) releases this process's buffers of the shuffle; {@link #stop()} releases
 * all of them and closes the manager, and a process that dies takes its buffers with it (reads
 * of them then fail, and so become fetch failures).
 *
 * <p>Configuration: {@link RdmaShuffleConf}. Not supported: push-based shuffle
 * ({@code spark.shuffle.push.enabled}).
 */
public class RdmaShuffleManager extends SortShuffleManager {

    private static final System.Logger LOG = System.getLogger(RdmaShuffleManager.class.getName());

    private final boolean isDriver;
    private final ExecutorShuffleState state;
    private volatile TokenRegistry registry;
    private volatile Map<String, LongAccumulator[]> routeAccumulators = Map.of();
    private volatile RpcEndpointRef registryRef;

    /**
     * Called by Spark ({@code ShuffleManager.create}) on the driver and on each executor.
     *
     * @param conf     Spark's configuration
     * @param isDriver whether this process is the driver
     * @throws IllegalArgumentException when a {@code spark.rdma4j.*} setting is invalid, or push-based
     *                                  shuffle is on
     */
    public RdmaShuffleManager(SparkConf conf, boolean isDriver) {
        super(conf);
        if (conf.getBoolean("spark.shuffle.push.enabled", false)) {
            throw new IllegalArgumentException("rdma4j shuffle does not support push-based shuffle: "
                    + "set spark.shuffle.push.enabled=false");
        }
        this.isDriver = isDriver;
        RdmaShuffleConf rdmaConf = new RdmaShuffleConf(conf);
        String executorId = isDriver ? "driver" : conf.get("spark.executor.id", "unknown");
        this.state = new ExecutorShuffleState(rdmaConf, executorId, shuffleBlockResolver(), this::registryRef);
    }

    /**
     * Same as {@code RdmaShuffleManager(conf, spark.executor.id == "driver")}.
     *
     * @param conf Spark's configuration
     */
    public RdmaShuffleManager(SparkConf conf) {
        this(conf, "driver".equals(conf.get("spark.executor.id", "driver")));
    }

    private RpcEndpointRef registryRef() {
        return registryRef(null);
    }

    /** @param sc the driver's context, to register the {@link RouteMetrics} accumulators with (driver only) */
    private RpcEndpointRef registryRef(SparkContext sc) {
        RpcEndpointRef ref = registryRef;
        if (ref == null) {
            synchronized (this) {
                ref = registryRef;
                if (ref == null) {
                    SparkEnv env = SparkEnv.get();
                    RpcEnv rpcEnv = env.rpcEnv();
                    if (isDriver) {
                        LinkedHashMap<String, LongAccumulator[]> accumulators =
                                RouteMetrics.register(sc != null ? sc : SparkContext.getOrCreate());
                        routeAccumulators = accumulators;
                        TokenRegistry r = new TokenRegistry(rpcEnv, RouteMetrics.serialize(accumulators));
                        ref = rpcEnv.setupEndpoint(TokenRegistry.NAME, r);
                        registry = r;
                    } else {
                        ref = RpcUtils.makeDriverRef(TokenRegistry.NAME, env.conf(), rpcEnv);
                    }
                    registryRef = ref;
                }
            }
        }
        return ref;
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        if (isDriver) {
            registryRef(dependency.rdd().sparkContext());
        }
        return super.registerShuffle(shuffleId, dependency);
    }

    @Override
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
                                                ShuffleWriteMetricsReporter metrics) {
        ShuffleWriter<K, V> writer = super.getWriter(handle, mapId, context, metrics);
        return new RdmaShuffleWriter<>(writer, state, handle.shuffleId(), mapId, metrics);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
                                                int startPartition, int endPartition, TaskContext context,
                                                ShuffleReadMetricsReporter metrics) {
        return new RdmaShuffleReader<>((BaseShuffleHandle<K, ?, C>) handle, startMapIndex, endMapIndex,
                startPartition, endPartition, context, metrics, state);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        int released = state.unregister(shuffleId);
        TokenRegistry r = registry;
        if (r != null) {
            r.remove(shuffleId);
        }
        if (released > 0) {
            LOG.log(System.Logger.Level.DEBUG, () -> "shuffle " + shuffleId + ": released " + released + " buffer(s)");
        }
        return super.unregisterShuffle(shuffleId);
    }

    @Override
    public void stop() {
        try {
            state.close();
        } finally {
            super.stop();
        }
    }

    /**
     * What carried the shuffle blocks read so far by the tasks that succeeded: the values of the
     * {@link RouteMetrics} accumulators, which Spark merges on the driver as each task ends.
     *
     * @return transport name ({@code shm}, {@code tcp}, {@code ibverbs}, or {@code local} for a
     *         reducer's own executor's outputs, {@code other} for more than one) to
     *         {@code {blocks, bytes}}, only routes that carried something; empty on an executor
     */
    public Map<String, long[]> routes() {
        return RouteMetrics.values(routeAccumulators);
    }

    /**
     * @return how many buffers this process holds for the shuffle (its published map outputs
     *         that are not empty)
     */
    public int ownedBufferCount(int shuffleId) {
        return state.ownedCount(shuffleId);
    }

    /** @return how many of this process's buffers of the shuffle are file mappings */
    int mappedBufferCount(int shuffleId) {
        return state.mappedCount(shuffleId);
    }

    /** @return how many of this process's buffers of the shuffle are registered read-only */
    int readOnlyBufferCount(int shuffleId) {
        return state.readOnlyCount(shuffleId);
    }

    /** @see ExecutorShuffleState#publishTimes() */
    long[] publishTimes() {
        return state.publishTimes();
    }

    /**
     * @return how many map outputs of the shuffle the driver knows; 0 on an executor
     */
    public int publishedOutputCount(int shuffleId) {
        TokenRegistry r = registry;
        return r == null ? 0 : r.outputCount(shuffleId);
    }
}
