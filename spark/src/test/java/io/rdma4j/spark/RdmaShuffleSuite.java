package io.rdma4j.spark;

import java.util.List;
import java.util.Map;
import org.apache.spark.ShuffleSuite;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Spark's own {@code ShuffleSuite} (from the spark-core test-jar), unchanged, with
 * {@link RdmaShuffleManager} as the shuffle manager: the way Spark's {@code SortShuffleSuite} runs
 * it with the built-in one. Its local-cluster tests start two executors in their own JVMs, so
 * blocks really travel between processes.
 *
 * <p>Tests that do not apply are in {@link #NOT_APPLICABLE} with the reason; Spark's
 * {@code SparkFunSuite} registers them as ignored, and {@link SparkShuffleSuiteTest} reports them
 * as skipped with that reason.
 */
public class RdmaShuffleSuite extends ShuffleSuite {

    /** Test name to the reason it does not apply to this shuffle manager. */
    static final Map<String, String> NOT_APPLICABLE = Map.of(
            "SPARK-36206: shuffle checksum detect disk corruption",
            "it overwrites a byte of a map output's data file after the map stage and expects the reducer to"
                    + " diagnose the corruption with the shuffle checksum, which rdma4j reducers do not do (with"
                    + " mapOutputs=copied the change never reaches them, with mapped it does: the private mapping"
                    + " shows the file's unwritten pages, and only the codec's own checks can catch it)");

    /** Creates the suite; its {@code conf} selects the rdma4j shuffle. */
    public RdmaShuffleSuite() {
        SparkTestConf.applyTo(conf());
    }

    @Override
    public scala.collection.immutable.Seq<String> excluded() {
        return CollectionConverters.asScala(List.copyOf(NOT_APPLICABLE.keySet())).toList();
    }
}
