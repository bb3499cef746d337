package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import scala.Tuple2;

/**
 * One small {@code reduceByKey} job on a local cluster (two executors, each its own JVM) inside
 * the soft-RoCE VM, with rdma4j's same-host transport off ({@code spark.rdma4j.shm.disable}), so
 * that the blocks between the executors go over ibverbs on the VM's rxe devices. Runs only there:
 * {@code VM_TESTS_MODULE=spark bin/softroce-vm bin/vm-tests}.
 *
 * <p>The VM emulates its two CPUs: the job is small (2,000 records, 4 map and 2 reduce tasks),
 * executors get the least memory Spark accepts, and the context waits for both executors before
 * the job starts (they take long to start there, and a job run on one executor has no remote
 * blocks). The expected sums are computed in plain Java: the host's tests compare the rdma4j
 * shuffle with Spark's built-in one, whose run here cost one to two minutes.
 */
@Tag("softroce")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SparkJobOverIbverbsVmTest {

    /**
     * The system property whose JVM flags (separated by spaces) the executors also get: {@code
     * bin/vm-tests} sets it to map their class-data archive (and, on the host, to make it).
     */
    static final String EXECUTOR_FLAGS_PROPERTY = "rdma4j.test.executorJvmFlags";

    private static final int RECORDS = 2_000;

    private Map<Integer, Long> rdmaSums;
    private Map<Integer, ReadMetrics.Read> reads;
    private Map<String, long[]> driverRoutes;

    /** The job's input: record {@code i} is {@code (i, "value-i-" + i % 40 x's)}. */
    private static List<Tuple2<Integer, String>> records() {
        List<Tuple2<Integer, String>> data = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            data.add(new Tuple2<>(i, "value-" + i + "-" + "x".repeat(i % 40)));
        }
        return data;
    }

    /** The job: per key {@code i % 97}, the sum of its records' value lengths. */
    private static Map<Integer, Long> sums(JavaSparkContext sc) {
        JavaPairRDD<Integer, Long> sums = sc.parallelizePairs(records(), 4)
                .mapToPair(t -> new Tuple2<>(t._1() % 97, (long) t._2().length()))
                .reduceByKey(Long::sum, 2);
        return new TreeMap<>(sums.collectAsMap());
    }

    /**
     * What the job must give, computed in plain Java (the host's tests compare the rdma4j shuffle
     * with Spark's built-in one; a built-in run here cost one to two minutes of emulated CPU).
     */
    private static Map<Integer, Long> expectedSums() {
        Map<Integer, Long> sums = new TreeMap<>();
        for (Tuple2<Integer, String> t : records()) {
            sums.merge(t._1() % 97, (long) t._2().length(), Long::sum);
        }
        return sums;
    }

    @BeforeAll
    void runTheJobOverRdma4j() throws Exception {
        ReadMetrics metrics = new ReadMetrics();
        SparkConf conf = SparkTestConf.applyTo(new SparkConf()
                .setMaster("local-cluster[2,1,512]").setAppName("rdma4j over ibverbs")
                .set("spark.ui.enabled", "false")
                .set("spark.executor.memory", "512m")
                .set("spark.rdma4j.shm.disable", "true")
                // the context waits for both executors' cores (a standalone backend expects spark.cores.max)
                .set("spark.cores.max", "2")
                .set("spark.scheduler.minRegisteredResourcesRatio", "1.0")
                .set("spark.scheduler.maxRegisteredResourcesWaitingTime", "10min"));
        String executorFlags = System.getProperty(EXECUTOR_FLAGS_PROPERTY, "").strip();
        if (!executorFlags.isEmpty()) {
            conf.set("spark.executor.extraJavaOptions", conf.get("spark.executor.extraJavaOptions") + " " + executorFlags);
        }
        try (JavaSparkContext sc = new JavaSparkContext(conf)) {
            sc.sc().addSparkListener(metrics);
            rdmaSums = sums(sc);
            sc.sc().listenerBus().waitUntilEmpty();
            driverRoutes = ((RdmaShuffleManager) SparkEnv.get().shuffleManager()).routes();
        }
        reads = metrics.byPartition();
        System.out.println("SparkJobOverIbverbsVmTest: reduce tasks " + reads + "; routes on the driver "
                + TokenRegistry.describe(driverRoutes));
    }

    @Test
    void theJobGivesTheSumsOfEveryRecord() {
        assertEquals(expectedSums(), rdmaSums);
    }

    @Test
    void ibverbsCarriedEveryRemoteBlock_andTheRouteMetricsSaySo() {
        assertEquals(2, reads.size(), "reduce tasks: " + reads);
        long remoteBlocks = 0;
        for (Map.Entry<Integer, ReadMetrics.Read> e : reads.entrySet()) {
            ReadMetrics.Read read = e.getValue();
            String partition = "reduce partition " + e.getKey() + ": " + read;
            // the task's rdma4j accumulators: its own executor's blocks local, every other one over ibverbs
            Map<String, Long> expected = new TreeMap<>();
            if (read.localBlocks() > 0) {
                expected.put(RouteMetrics.name("blocks", "local"), read.localBlocks());
                expected.put(RouteMetrics.name("bytes", "local"), read.localBytes());
            }
            if (read.remoteBlocks() > 0) {
                expected.put(RouteMetrics.name("blocks", "ibverbs"), read.remoteBlocks());
                expected.put(RouteMetrics.name("bytes", "ibverbs"), read.remoteBytes());
            }
            Map<String, Long> routes = new TreeMap<>(read.routes());
            routes.values().removeIf(v -> v == 0);
            assertEquals(expected, routes, partition);
            remoteBlocks += read.remoteBlocks();
        }
        assertTrue(remoteBlocks > 0, "some blocks came from the other executor: " + reads);
        assertTrue(driverRoutes.containsKey("ibverbs"), "routes on the driver: " + TokenRegistry.describe(driverRoutes));
        assertEquals(remoteBlocks, driverRoutes.get("ibverbs")[0], "routes on the driver: " + TokenRegistry.describe(driverRoutes));
    }
}
