package io.rdma4j.spark;

import java.io.IOException;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import scala.Option;
import scala.Product2;
import scala.collection.Iterator;

/**
 * Spark's own sort-based writer (whichever {@code SortShuffleManager} picks: bypass-merge,
 * serialized or sort), followed, once the map output is committed, by its registration with
 * this executor's {@code RdmaManager} and the publication of its token.
 *
 * <p>Publication happens in {@link #stop(boolean) stop(true)}, before the {@code MapStatus} is
 * returned to the task: if the output cannot be registered, the task fails (and Spark retries it)
 * instead of reporting an output nobody could read. The token is sent to the driver before the
 * status, without waiting for the driver's answer (see {@link ExecutorShuffleState#publish}). The
 * time it takes is added to the shuffle write time.
 */
final class RdmaShuffleWriter<K, V> extends ShuffleWriter<K, V> {

    private final ShuffleWriter<K, V> delegate;
    private final ExecutorShuffleState state;
    private final int shuffleId;
    private final long mapId;
    private final ShuffleWriteMetricsReporter metrics;

    RdmaShuffleWriter(ShuffleWriter<K, V> delegate, ExecutorShuffleState state, int shuffleId, long mapId,
                      ShuffleWriteMetricsReporter metrics) {
        this.delegate = delegate;
        this.state = state;
        this.shuffleId = shuffleId;
        this.mapId = mapId;
        this.metrics = metrics;
    }

    @Override
    public void write(Iterator<Product2<K, V>> records) throws IOException {
        delegate.write(records);
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        Option<MapStatus> status = delegate.stop(success);
        if (!success || status.isEmpty()) {
            return status;
        }
        long start = System.nanoTime();
        try {
            state.publish(shuffleId, mapId, delegate.getPartitionLengths());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("rdma4j: could not register shuffle " + shuffleId
                    + " map output " + mapId + ": " + e.getMessage(), e);
        } finally {
            metrics.incWriteTime(System.nanoTime() - start);
        }
        return status;
    }

    @Override
    public long[] getPartitionLengths() {
        return delegate.getPartitionLengths();
    }
}
