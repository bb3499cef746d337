package io.rdma4j.spark;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.Success$;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Collects, from {@code SparkListenerTaskEnd} events, the shuffle read metrics of every reduce
 * task that succeeded, by partition, with the values of the task's rdma4j route accumulators.
 */
final class ReadMetrics extends SparkListener {

    /** One reduce task's shuffle read, as Spark's task metrics and the rdma4j accumulators report it. */
    record Read(long records, long localBlocks, long remoteBlocks, long localBytes, long remoteBytes,
                long fetchWaitMillis, Map<String, Long> routes) {
        long blocks() {
            return localBlocks + remoteBlocks;
        }

        long bytes() {
            return localBytes + remoteBytes;
        }

        long routeBlocks() {
            return sum("rdma4j shuffle blocks read over ");
        }

        long routeBytes() {
            return sum("rdma4j shuffle bytes read over ");
        }

        private long sum(String prefix) {
            return routes.entrySet().stream().filter(e -> e.getKey().startsWith(prefix))
                    .mapToLong(Map.Entry::getValue).sum();
        }
    }

    private final Map<Integer, Read> byPartition = new ConcurrentHashMap<>();

    @Override
    public void onTaskEnd(SparkListenerTaskEnd end) {
        if (end.reason() != Success$.MODULE$ || end.taskMetrics() == null) {
            return;
        }
        ShuffleReadMetrics m = end.taskMetrics().shuffleReadMetrics();
        if (m.recordsRead() == 0 && m.totalBlocksFetched() == 0) {
            return;
        }
        Map<String, Long> routes = new TreeMap<>();
        for (AccumulableInfo info : CollectionConverters.asJava(end.taskInfo().accumulables())) {
            if (info.name().isDefined() && info.name().get().startsWith("rdma4j shuffle") && info.update().isDefined()) {
                routes.put(info.name().get(), ((Number) info.update().get()).longValue());
            }
        }
        byPartition.put(end.taskInfo().index(), new Read(m.recordsRead(), m.localBlocksFetched(),
                m.remoteBlocksFetched(), m.localBytesRead(), m.remoteBytesRead(), m.fetchWaitTime(), routes));
    }

    void clear() {
        byPartition.clear();
    }

    /** @return partition index to the read of the task that succeeded last for it */
    Map<Integer, Read> byPartition() {
        return new TreeMap<>(byPartition);
    }
}
