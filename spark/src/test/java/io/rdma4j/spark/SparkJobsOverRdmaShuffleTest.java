package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaManager;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.FetchFailed;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * Jobs on a local cluster (a master, two workers and two executors, each executor its own JVM)
 * whose shuffles go through {@link RdmaShuffleManager}, checked against the same jobs on the same
 * data with Spark's built-in sort shuffle.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)   // the test that kills an executor runs last
class SparkJobsOverRdmaShuffleTest {

    private static final int RECORDS = 20_000;
    /** A prime above RECORDS: i * 7919 mod it is a permutation, so sort keys are unique. */
    private static final int PRIME = 20_011;

    private Map<Integer, List<String>> expectedGroups;
    private Map<Integer, Long> expectedSums;
    private List<Tuple2<Integer, String>> expectedSorted;
    private Map<Integer, Long> expectedStreamedSums;
    private JavaSparkContext sc;
    private final AtomicLong remoteBytesRead = new AtomicLong();
    private final AtomicLong remoteBlocksFetched = new AtomicLong();
    private final AtomicInteger fetchFailures = new AtomicInteger();
    private final List<String> fetchFailureMessages = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> tasksRunByStage = new ConcurrentHashMap<>();
    private final ReadMetrics clusterReads = new ReadMetrics();
    private Map<Integer, ReadMetrics.Read> expectedReads;
    private List<String> expectedSkewJoinRows;
    private List<String> expectedBroadcastJoinRows;

    private static List<Tuple2<Integer, String>> data() {
        List<Tuple2<Integer, String>> data = new ArrayList<>(RECORDS);
        for (int i = 0; i < RECORDS; i++) {
            data.add(new Tuple2<>((int) ((long) i * 7919 % PRIME), "value-" + i + "-" + "x".repeat(i % 40)));
        }
        return data;
    }

    private static JavaPairRDD<Integer, String> pairs(JavaSparkContext sc) {
        return sc.parallelizePairs(data(), 4);
    }

    private static Map<Integer, List<String>> groups(JavaSparkContext sc) {
        Map<Integer, List<String>> groups = new TreeMap<>();
        for (Tuple2<Integer, Iterable<String>> g : pairs(sc).mapToPair(t -> new Tuple2<>(t._1() % 1000, t._2()))
                .groupByKey(3).collect()) {
            List<String> values = new ArrayList<>();
            g._2().forEach(values::add);
            values.sort(null);                                  // order within a group is not defined
            groups.put(g._1(), values);
        }
        return groups;
    }

    private static Map<Integer, Long> sums(JavaSparkContext sc) {
        return new TreeMap<>(pairs(sc).mapToPair(t -> new Tuple2<>(t._1() % 777, (long) t._2().length()))
                .reduceByKey(Long::sum, 5).collectAsMap());
    }

    private static List<Tuple2<Integer, String>> sorted(JavaSparkContext sc) {
        return pairs(sc).sortByKey(true, 3).collect();
    }

    /**
     * Sums of lengths per key over a shuffle without aggregator or ordering ({@code partitionBy}),
     * so that a reduce task consumes records while its reader is still fetching. With {@code dir},
     * every map task leaves the pid of its executor there ({@code map-<pid>}), and the first reduce
     * task to see a record writes its pid to {@code dir/reading}, then waits for {@code dir/killed}
     * (at most two minutes) before reading the rest. One reduce task: it is the only reader, so
     * no other reducer meets the executor's loss first and fails the stage under it.
     */
    private static Map<Integer, Long> streamedSums(JavaSparkContext sc, String dir) {
        return new TreeMap<>(sc.parallelizePairs(data(), 16)
                .mapPartitionsToPair(records -> {
                    if (dir != null) {
                        Files.writeString(Path.of(dir, "map-" + ProcessHandle.current().pid()), "");
                    }
                    List<Tuple2<Integer, Long>> out = new ArrayList<>();
                    records.forEachRemaining(t -> out.add(new Tuple2<>(t._1() % 577, (long) t._2().length())));
                    return out.iterator();
                })
                .partitionBy(new org.apache.spark.HashPartitioner(1))
                .mapPartitionsToPair(records -> {
                    Map<Integer, Long> sums = new HashMap<>();
                    if (dir != null && records.hasNext()) {
                        awaitTheKillIfFirstReader(Path.of(dir));
                    }
                    records.forEachRemaining(t -> sums.merge(t._1(), t._2(), Long::sum));
                    Iterator<Tuple2<Integer, Long>> out = sums.entrySet().stream()
                            .map(e -> new Tuple2<>(e.getKey(), e.getValue())).iterator();
                    return out;
                })
                .collectAsMap());
    }

    private static void awaitTheKillIfFirstReader(Path dir) throws Exception {
        Path reading = dir.resolve("reading");
        try {
            Files.writeString(reading.resolveSibling("reading.tmp-" + ProcessHandle.current().pid()),
                    Long.toString(ProcessHandle.current().pid()));
            Files.move(reading.resolveSibling("reading.tmp-" + ProcessHandle.current().pid()), reading);
        } catch (FileAlreadyExistsException e) {
            return;                                             // not the first reducer: no waiting
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.exists(dir.resolve("killed")) && System.nanoTime() < deadline) {
            Thread.sleep(10);                                   // bounded poll of the test's signal
        }
    }

    /** Rows as strings, and the final plan adaptive query execution ran. */
    record SqlResult(List<String> rows, String plan) {
    }

    /**
     * Orders joined with customers (half the orders have one customer), aggregated by region,
     * with adaptive query execution on. Without {@code broadcastAtRuntime} the join stays a sort
     * merge join (no broadcast threshold) and AQE splits the skewed partition (its reducers read
     * ranges of map outputs); with it, AQE turns the join into a broadcast once it sees the
     * customers' size and reads the orders' shuffle with the local reader (one reducer per map
     * output). The aggregation's shuffle is coalesced.
     */
    private static SqlResult joinAndAggregate(SparkSession sql, boolean broadcastAtRuntime) throws Exception {
        sql.conf().set("spark.sql.adaptive.enabled", "true");
        sql.conf().set("spark.sql.shuffle.partitions", "8");
        sql.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
        sql.conf().set("spark.sql.adaptive.autoBroadcastJoinThreshold", broadcastAtRuntime ? "10m" : "-1");
        sql.conf().set("spark.sql.adaptive.skewJoin.enabled", "true");
        sql.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1k");
        sql.conf().set("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "2");
        sql.conf().set("spark.sql.adaptive.advisoryPartitionSizeInBytes", "4k");
        Dataset<Row> orders = sql.range(0, RECORDS, 1, 4).selectExpr("id AS order_id",
                "IF(id % 2 = 0, 7, id % 500) AS customer", "id % 97 AS amount",
                "md5(cast(id AS string)) AS note");                // incompressible: sizes follow row counts
        Dataset<Row> customers = sql.range(0, 500, 1, 2).selectExpr("id AS customer",
                "concat('customer-', id) AS name", "id % 10 AS region");
        Dataset<Row> result = orders.join(customers, "customer").groupBy("region")
                .agg(functions.count("*"), functions.sum("amount"), functions.max("name"), functions.max("note"),
                        functions.min("order_id"))     // (a distinct count would keep the join's partitioning: no split)
                .orderBy("region");
        List<String> rows = result.collectAsList().stream().map(Row::toString).toList();
        return new SqlResult(rows, result.queryExecution().executedPlan().toString());
    }

    @BeforeAll
    void computeWithTheBuiltInShuffleThenStartTheCluster() throws Exception {
        try (JavaSparkContext builtIn = new JavaSparkContext(new SparkConf()
                .setMaster("local[2]").setAppName("built-in").set("spark.ui.enabled", "false"))) {
            assertEquals("sort", builtIn.getConf().get("spark.shuffle.manager", "sort"));
            expectedGroups = groups(builtIn);
            expectedSums = sums(builtIn);
            expectedSorted = sorted(builtIn);
            expectedStreamedSums = streamedSums(builtIn, null);
            ReadMetrics builtInReads = new ReadMetrics();
            builtIn.sc().addSparkListener(builtInReads);
            sums(builtIn);
            builtIn.sc().listenerBus().waitUntilEmpty();
            expectedReads = builtInReads.byPartition();
            SparkSession sql = SparkSession.builder().sparkContext(builtIn.sc()).getOrCreate();
            expectedSkewJoinRows = joinAndAggregate(sql, false).rows();
            expectedBroadcastJoinRows = joinAndAggregate(sql, true).rows();
        } finally {
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
        sc = new JavaSparkContext(SparkTestConf.localCluster("rdma4j jobs")
                // small staging buffers: many actions per reduce task, and blocks larger than one
                .set("spark.rdma4j.shuffle.fetchBufferSize", "16k"));
        sc.sc().addSparkListener(clusterReads);
        sc.sc().addSparkListener(new SparkListener() {
            @Override
            public void onTaskEnd(SparkListenerTaskEnd end) {
                if (end.taskMetrics() != null) {
                    remoteBytesRead.addAndGet(end.taskMetrics().shuffleReadMetrics().remoteBytesRead());
                    remoteBlocksFetched.addAndGet(end.taskMetrics().shuffleReadMetrics().remoteBlocksFetched());
                }
                tasksRunByStage.computeIfAbsent(end.stageId() + "." + end.stageAttemptId(), id -> new AtomicInteger()).incrementAndGet();
                if (end.reason() instanceof FetchFailed failed) {
                    fetchFailures.incrementAndGet();
                    fetchFailureMessages.add(failed.message());
                }
            }
        });
    }

    @AfterAll
    void stopTheCluster() {
        if (sc != null) {
            sc.close();
        }
    }

    @Test
    void groupByKeyGivesTheBuiltInShufflesGroups() {
        assertEquals(expectedGroups, groups(sc));
    }

    @Test
    void reduceByKeyGivesTheBuiltInShufflesSums() {
        assertEquals(expectedSums, sums(sc));
    }

    @Test
    void sortByKeyGivesTheBuiltInShufflesOrder() {
        assertEquals(expectedSorted, sorted(sc));
    }

    @Test
    void blocksBetweenExecutorsTravelOverTheTransportRdma4jPicksForThisHost() throws Exception {
        sums(sc);
        String expected;
        try (RdmaManager probe = RdmaManager.newBuilder().build()) {
            expected = probe.transports().get(0);               // the highest-priority transport open here
        }
        RdmaShuffleManager driver = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
        Map<String, long[]> routes = driver.routes();      // accumulators: merged before the job ends
        assertTrue(routes.containsKey(expected), "routes " + describe(routes) + " lack " + expected);
        assertTrue(routes.get(expected)[1] > 0);
        Set<String> known = Set.of("local", "shm", "tcp", "ibverbs");
        assertTrue(known.containsAll(routes.keySet()), describe(routes));
        sc.sc().listenerBus().waitUntilEmpty();
        assertTrue(remoteBytesRead.get() > 0, "Spark's task metrics count remote bytes read");
        assertTrue(remoteBlocksFetched.get() > 0, "Spark's task metrics count remote blocks fetched");
    }

    @Test
    void sparksTaskMetricsCountTheBlocksAndBytesTheBuiltInShuffleCounts_andTheRoutesCarriedThemAll() throws Exception {
        sc.sc().listenerBus().waitUntilEmpty();
        clusterReads.clear();
        sums(sc);
        sc.sc().listenerBus().waitUntilEmpty();
        Map<Integer, ReadMetrics.Read> reads = clusterReads.byPartition();
        assertEquals(expectedReads.keySet(), reads.keySet(), "reduce tasks");
        long remoteBlocks = 0;
        for (Map.Entry<Integer, ReadMetrics.Read> e : reads.entrySet()) {
            ReadMetrics.Read expected = expectedReads.get(e.getKey());
            ReadMetrics.Read read = e.getValue();
            String partition = "reduce partition " + e.getKey() + ": " + read + " vs the built-in shuffle's " + expected;
            assertEquals(expected.records(), read.records(), partition);
            assertEquals(expected.blocks(), read.localBlocks() + read.remoteBlocks(), partition);
            assertEquals(expected.bytes(), read.localBytes() + read.remoteBytes(), partition);
            // the rdma4j accumulators of the task account for every block and byte Spark counted
            assertEquals(read.localBlocks() + read.remoteBlocks(), read.routeBlocks(), partition);
            assertEquals(read.localBytes() + read.remoteBytes(), read.routeBytes(), partition);
            assertEquals(read.localBytes(), read.routes().getOrDefault(RouteMetrics.name("bytes", "local"), 0L), partition);
            assertTrue(read.fetchWaitMillis() >= 0, partition);
            remoteBlocks += read.remoteBlocks();
        }
        assertTrue(remoteBlocks > 0, "some blocks came from the other executor");
    }

    @Test
    void aDataFrameJoinWithASkewedKeyAndAnAggregationUnderAqeGiveTheBuiltInShufflesRows() throws Exception {
        SqlResult result = joinAndAggregate(SparkSession.builder().sparkContext(sc.sc()).getOrCreate(), false);
        assertTrue(result.plan().contains("skewed"), "AQE split the skewed join partition: " + result.plan());
        assertEquals(expectedSkewJoinRows, result.rows());
    }

    @Test
    void aDataFrameJoinAqeTurnsIntoABroadcastReadsMapOutputsLocallyAndGivesTheBuiltInShufflesRows() throws Exception {
        SqlResult result = joinAndAggregate(SparkSession.builder().sparkContext(sc.sc()).getOrCreate(), true);
        assertTrue(result.plan().contains("BroadcastHashJoin") && result.plan().contains("local"),
                "AQE made a broadcast join with a local shuffle read: " + result.plan());
        assertEquals(expectedBroadcastJoinRows, result.rows());
    }

    @Test
    void aMapOutputIsPublishedAsAReadOnlyRegistrationOfAMappingOfSparksCommittedDataFileNotACopy() {
        JavaPairRDD<Integer, Long> shuffled = pairs(sc).mapToPair(t -> new Tuple2<>(t._1() % 53, 1L))
                .reduceByKey(Long::sum, 4);
        assertEquals(53, shuffled.count());
        int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();
        Map<String, int[]> byExecutor = new TreeMap<>();
        for (int attempt = 0; attempt < 20 && byExecutor.size() < 2; attempt++) {
            for (Tuple2<String, int[]> r : sc.parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8), 8)
                    .map(x -> {
                        RdmaShuffleManager m = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
                        return new Tuple2<>(SparkEnv.get().executorId(),
                                new int[] {m.ownedBufferCount(shuffleId), m.mappedBufferCount(shuffleId),
                                        m.readOnlyBufferCount(shuffleId)});
                    }).collect()) {
                byExecutor.putIfAbsent(r._1(), r._2());
            }
        }
        int owned = byExecutor.values().stream().mapToInt(c -> c[0]).sum();
        int mapped = byExecutor.values().stream().mapToInt(c -> c[1]).sum();
        assertTrue(owned > 0, "the executors hold the shuffle's map outputs");
        int readOnly = byExecutor.values().stream().mapToInt(c -> c[2]).sum();
        assertEquals(owned, mapped, "every map output the executors hold is their data file mapped, none a copy");
        assertEquals(owned, readOnly, "every map output is registered read-only: its token lets reducers only read it");
    }

    @Test
    void aShuffleUnregisteredOnItsExecutorsIsAFetchFailureAndTheMapStageRunsAgain() throws Exception {
        JavaPairRDD<Integer, Long> shuffled = pairs(sc).mapToPair(t -> new Tuple2<>(t._1() % 101, 1L))
                .reduceByKey(Long::sum, 4);
        assertEquals(101, shuffled.count());
        int shuffleId = ((ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head()).shuffleId();
        // Release the shuffle's buffers on both executors, as a cleaned shuffle is: its map outputs
        // stay registered with the MapOutputTracker, so the next job reads them again.
        Map<String, Integer> releasedBy = new ConcurrentHashMap<>();
        for (int attempt = 0; attempt < 20 && releasedBy.size() < 2; attempt++) {
            for (Tuple2<String, Integer> r : sc.parallelize(List.of(1, 2, 3, 4, 5, 6, 7, 8), 8)
                    .map(x -> {
                        RdmaShuffleManager m = (RdmaShuffleManager) SparkEnv.get().shuffleManager();
                        int held = m.ownedBufferCount(shuffleId);
                        m.unregisterShuffle(shuffleId);
                        return new Tuple2<>(SparkEnv.get().executorId(), held);
                    }).collect()) {
                releasedBy.merge(r._1(), r._2(), Integer::sum);
            }
        }
        assertEquals(2, releasedBy.size(), "both executors ran a release task: " + releasedBy);
        assertTrue(releasedBy.values().stream().mapToInt(Integer::intValue).sum() > 0, "buffers released: " + releasedBy);
        int failuresBefore = fetchFailures.get();
        Map<Integer, Long> counts = new TreeMap<>(shuffled.collectAsMap());
        sc.sc().listenerBus().waitUntilEmpty();
        assertTrue(fetchFailures.get() > failuresBefore, "a reducer met a released buffer as a fetch failure");
        Map<Integer, Long> expected = new TreeMap<>();
        for (Tuple2<Integer, String> t : data()) {
            expected.merge(t._1() % 101, 1L, Long::sum);
        }
        assertEquals(expected, counts);
    }

    private static String describe(Map<String, long[]> routes) {
        return TokenRegistry.describe(routes);
    }

    @Test
    @Order(Integer.MAX_VALUE)
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void anExecutorKilledWhileAReducerReadsItsMapOutputs_theJobFinishesWithTheBuiltInShufflesResult() throws Exception {
        Path dir = Files.createTempDirectory("rdma4j-kill");
        sc.sc().listenerBus().waitUntilEmpty();
        fetchFailureMessages.clear();
        tasksRunByStage.clear();
        CompletableFuture<Map<Integer, Long>> job = CompletableFuture.supplyAsync(() -> streamedSums(sc, dir.toString()));
        Path reading = dir.resolve("reading");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (!Files.exists(reading) && !job.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(10);                                   // bounded poll: a reducer is reading
        }
        assertTrue(Files.exists(reading), "a reducer started reading");
        long readerPid = Long.parseLong(Files.readString(reading));
        List<Long> owners;
        try (var files = Files.list(dir)) {
            owners = files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("map-"))
                    .map(n -> Long.parseLong(n.substring(4))).toList();
        }
        long victimPid = owners.stream().filter(pid -> pid != readerPid).findFirst()
                .orElseThrow(() -> new AssertionError("no other executor wrote map outputs: " + owners));
        ProcessHandle victim = ProcessHandle.of(victimPid).orElseThrow();
        assertTrue(victim.destroyForcibly(), "SIGKILL sent to executor " + victimPid);   // kill -9
        // onExit() does not complete here: the executor is a child of this JVM (local-cluster runs
        // the workers in it) that the worker's own waitFor reaps; poll instead
        for (long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(1); victim.isAlive() && System.nanoTime() < end; ) {
            Thread.sleep(10);
        }
        assertFalse(victim.isAlive(), "executor " + victimPid + " is gone");
        Files.writeString(dir.resolve("killed"), "");

        assertEquals(expectedStreamedSums, job.get(4, TimeUnit.MINUTES));
        sc.sc().listenerBus().waitUntilEmpty();
        assertTrue(fetchFailureMessages.stream().anyMatch(m -> m.contains("rdma4j read of")),
                "the reader met the dead owner as a fetch failure: " + fetchFailureMessages);
        assertTrue(tasksRunByStage.size() > 2, "a stage ran again after the kill (stage.attempt: tasks ended) "
                + tasksRunByStage);
    }
}
