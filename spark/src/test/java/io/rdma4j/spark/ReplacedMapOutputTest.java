package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.SparkConf;
import org.apache.spark.executor.TempShuffleReadMetrics;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.storage.BlockManagerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map output published again under the same map id (a re-run map task with
 * {@code spark.shuffle.useOldFetchProtocol}, where the map id is the map index): the executor
 * releases the older output, and whoever still reads the older one gets bytes of a map output,
 * never a crash. Two executors' states in this JVM (each with its own manager), a registry that
 * answers in place of the driver's, and data files written by the test in Spark's layout.
 */
class ReplacedMapOutputTest {

    private static final int SHUFFLE = 5;
    private static final long MAP = 2;
    private static final long[] LENGTHS = {3000, 0, 5000, 1200};

    @TempDir
    Path dir;
    private final DriverRegistryRef driver = new DriverRegistryRef();
    private ExecutorShuffleState owner;
    private ExecutorShuffleState reader;

    /** Spark's resolver, with data files where the test writes them. */
    private final class Files0 extends IndexShuffleBlockResolver {
        Files0() {
            super(new SparkConf(false));
        }

        @Override
        public File getDataFile(int shuffleId, long mapId) {
            return dir.resolve("shuffle_" + shuffleId + "_" + mapId + "_0.data").toFile();
        }
    }

    @BeforeEach
    void start() {
        SparkConf conf = new SparkConf(false).set("spark.rdma4j.shuffle.fetchBufferSize", "4k");
        owner = new ExecutorShuffleState(new RdmaShuffleConf(conf), "owner", new Files0(), () -> driver);
        reader = new ExecutorShuffleState(new RdmaShuffleConf(conf), "reader", null, () -> driver);
    }

    @AfterEach
    void stop() {
        reader.close();
        owner.close();
    }

    /** Writes the map output's data file as a new file (as Spark's commit renames one in place), byte i = seed + i. */
    private byte[] commit(int seed) throws IOException {
        long total = 0;
        for (long l : LENGTHS) {
            total += l;
        }
        byte[] bytes = new byte[(int) total];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (seed + i * 7);
        }
        Path file = new Files0().getDataFile(SHUFFLE, MAP).toPath();
        Path tmp = Files.createTempFile(dir, "commit", ".tmp");
        Files.write(tmp, bytes);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        return bytes;
    }

    private static BlockFetcher.MapRead read(MapOutputToken output) {
        return new BlockFetcher.MapRead(BlockManagerId.apply("owner", "localhost", 1, scala.Option.empty()),
                MAP, (int) MAP, output, 0, LENGTHS.length);
    }

    /** Every block's bytes, in order. */
    private static byte[] drain(BlockFetcher fetcher) throws IOException {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (BlockFetcher.Block b = fetcher.nextBlock(); b != null; b = fetcher.nextBlock()) {
            all.write(b.stream().readAllBytes());
        }
        fetcher.free();
        return all.toByteArray();
    }

    @Test
    void aMapOutputPublishedAgainUnderTheSameMapIdReleasesTheOlderOnesRegistration() throws IOException {
        commit(1);
        owner.publish(SHUFFLE, MAP, LENGTHS);
        assertEquals(1, owner.manager().registeredBufferCount());
        commit(2);
        owner.publish(SHUFFLE, MAP, LENGTHS);
        assertEquals(1, owner.ownedCount(SHUFFLE));
        assertEquals(1, owner.manager().registeredBufferCount(), "the older output's registration is released");
        owner.publish(SHUFFLE, MAP, new long[] {0, 0, 0, 0});     // published again, empty this time
        assertEquals(0, owner.ownedCount(SHUFFLE));
        assertEquals(0, owner.manager().registeredBufferCount(), "an output replaced by an empty one is released too");
    }

    @Test
    void aReducerHoldingTheOlderToken_readsTheOutputTheDriverKnowsNow() throws IOException {
        commit(1);
        owner.publish(SHUFFLE, MAP, LENGTHS);
        MapOutputToken older = reader.token(SHUFFLE, MAP);      // looked up and cached before the re-run
        byte[] now = commit(2);
        owner.publish(SHUFFLE, MAP, LENGTHS);
        TempShuffleReadMetrics metrics = new TempShuffleReadMetrics();
        byte[] got = drain(new BlockFetcher(reader, SHUFFLE, List.of(read(older)), metrics));
        assertArrayEquals(now, got);
        assertEquals(now.length, metrics.remoteBytesRead());
        assertArrayEquals(driver.registry.lookup(SHUFFLE).get(MAP).token(), reader.token(SHUFFLE, MAP).token(),
                "the reducer's executor caches the new token");
    }

    @Test
    void aLocalReaderOfTheOlderOutput_readsItsBytesToTheEnd_andTheOlderOutputIsReleasedWhenItIsDone() throws IOException {
        byte[] before = commit(1);
        owner.publish(SHUFFLE, MAP, LENGTHS);
        // a reduce task of the owner's executor, planned on the older output
        BlockFetcher local = new BlockFetcher(owner, SHUFFLE, List.of(read(owner.token(SHUFFLE, MAP))),
                new TempShuffleReadMetrics());
        List<byte[]> first = new ArrayList<>();
        BlockFetcher.Block b = local.nextBlock();
        assertNotNull(b);
        first.add(b.stream().readAllBytes());
        commit(2);
        owner.publish(SHUFFLE, MAP, LENGTHS);                    // replaced while the reader reads
        assertEquals(2, owner.manager().registeredBufferCount(), "the older output lives while a local reader holds it");
        byte[] rest = drain(local);
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        all.write(first.get(0));
        all.write(rest);
        assertArrayEquals(before, all.toByteArray());
        assertEquals(1, owner.manager().registeredBufferCount(), "released when the reader is done");
    }
}
