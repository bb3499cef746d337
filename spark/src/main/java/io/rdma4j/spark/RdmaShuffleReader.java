package io.rdma4j.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.MapOutputTracker;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.util.LongAccumulator;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import org.apache.spark.util.collection.ExternalSorter$;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.Seq;
import scala.math.Ordering;

/**
 * Reads a reduce task's partition range: the map outputs the {@code MapOutputTracker} lists are
 * fetched by a {@link BlockFetcher}; each block goes through Spark's serializer manager (which
 * decompresses and decrypts as configured) and the dependency's serializer, then through the
 * dependency's aggregator and key ordering, as Spark's own {@code BlockStoreShuffleReader} does.
 * Records read, bytes and blocks fetched (local and remote) and fetch wait time go to the
 * task's shuffle read metrics.
 */
final class RdmaShuffleReader<K, C> implements ShuffleReader<K, C> {

    private final BaseShuffleHandle<K, ?, C> handle;
    private final int startMapIndex;
    private final int endMapIndex;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter metrics;
    private final ExecutorShuffleState state;

    RdmaShuffleReader(BaseShuffleHandle<K, ?, C> handle, int startMapIndex, int endMapIndex, int startPartition,
                      int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics,
                      ExecutorShuffleState state) {
        this.handle = handle;
        this.startMapIndex = startMapIndex;
        this.endMapIndex = endMapIndex;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.metrics = metrics;
        this.state = state;
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Iterator<Product2<K, C>> read() {
        ShuffleDependency<K, ?, C> dep = handle.dependency();
        int shuffleId = handle.shuffleId();
        SparkEnv env = SparkEnv.get();
        MapOutputTracker tracker = env.mapOutputTracker();
        List<BlockFetcher.MapRead> reads = planReads(shuffleId,
                tracker.getMapSizesByExecutorId(shuffleId, startMapIndex, endMapIndex, startPartition, endPartition));
        Map<String, LongAccumulator[]> routeAccumulators = state.routeAccumulators();
        BlockFetcher fetcher = new BlockFetcher(state, shuffleId, reads, metrics);
        context.addTaskCompletionListener((TaskCompletionListener) ctx -> {
            fetcher.free();
            RouteMetrics.add(routeAccumulators, fetcher.routes());     // before the task's accumulators are sent
        });
        SerializerManager serializerManager = env.serializerManager();
        SerializerInstance serializer = dep.serializer().newInstance();

        Iterator<Tuple2<Object, Object>> records = new AbstractIterator<>() {
            private Iterator<Tuple2<Object, Object>> block = scala.collection.Iterator$.MODULE$.empty();
            private boolean finished;

            @Override
            public boolean hasNext() {
                while (!block.hasNext()) {
                    if (finished) {
                        return false;
                    }
                    BlockFetcher.Block next = fetcher.nextBlock();
                    if (next == null) {
                        finished = true;
                        context.taskMetrics().mergeShuffleReadMetrics();
                        fetcher.free();
                        return false;
                    }
                    block = serializer.deserializeStream(serializerManager.wrapStream(next.id(), next.stream()))
                            .asKeyValueIterator();
                }
                return true;
            }

            @Override
            public Tuple2<Object, Object> next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                metrics.incRecordsRead(1);
                return block.next();
            }
        };
        Iterator<Product2<K, C>> interruptible = new InterruptibleIterator(context, records);

        Iterator<Product2<K, C>> aggregated;
        Option<Aggregator<K, ?, C>> aggregator = (Option) dep.aggregator();
        if (aggregator.isDefined()) {
            Aggregator agg = aggregator.get();
            aggregated = dep.mapSideCombine()
                    ? (Iterator) agg.combineCombinersByKey((Iterator) interruptible, context)
                    : (Iterator) agg.combineValuesByKey((Iterator) interruptible, context);
        } else {
            aggregated = interruptible;
        }
        Option<Ordering<K>> ordering = dep.keyOrdering();
        if (ordering.isDefined()) {
            ExternalSorter<K, C, C> sorter = new ExternalSorter<>(context, Option.empty(), Option.empty(),
                    ordering, dep.serializer(), ExternalSorter$.MODULE$.$lessinit$greater$default$6());
            Iterator<Product2<K, C>> sorted = sorter.insertAllAndUpdateMetrics((Iterator) aggregated);
            return new InterruptibleIterator<>(context, sorted);
        }
        return aggregated instanceof InterruptibleIterator ? aggregated : new InterruptibleIterator<>(context, aggregated);
    }

    /** One read per map output the tracker lists, in its order, with the output's published token. */
    private List<BlockFetcher.MapRead> planReads(int shuffleId,
            Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> byAddress) {
        Map<Long, BlockFetcher.MapRead> reads = new LinkedHashMap<>();
        while (byAddress.hasNext()) {
            Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> entry = byAddress.next();
            Iterator<Tuple3<BlockId, Object, Object>> blocks = entry._2().iterator();
            while (blocks.hasNext()) {
                Tuple3<BlockId, Object, Object> block = blocks.next();
                if (!(block._1() instanceof ShuffleBlockId id)) {
                    throw new UnsupportedOperationException("rdma4j shuffle cannot read " + block._1()
                            + " (push-based shuffle is not supported)");
                }
                if (reads.containsKey(id.mapId())) {
                    continue;
                }
                int mapIndex = (Integer) block._3();
                MapOutputToken output = state.token(shuffleId, id.mapId());
                if (output == null || output.numPartitions() < endPartition) {
                    String why = output == null
                            ? "the driver knows no rdma4j token for it"
                            : "its token covers " + output.numPartitions() + " partitions, not " + endPartition;
                    throw BlockFetcher.sneaky(new FetchFailedException(entry._1(), shuffleId, id.mapId(), mapIndex,
                            id.reduceId(), "rdma4j: cannot read map output " + id.mapId() + ": " + why, null));
                }
                reads.put(id.mapId(), new BlockFetcher.MapRead(entry._1(), id.mapId(), mapIndex, output,
                        startPartition, endPartition));
            }
        }
        return new ArrayList<>(reads.values());
    }
}
