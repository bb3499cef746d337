package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.apache.spark.executor.TempShuffleReadMetrics;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.storage.BlockManagerId;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reducer's fetch against a real owner (a second manager in this JVM, reached over the
 * transports it runs): bytes arrive intact whatever the batching, and a map output that cannot
 * be read becomes Spark's fetch failure for that map output.
 */
class BlockFetcherTest {

    private static final int SHUFFLE = 3;

    private RdmaManager owner;
    private ExecutorShuffleState reader;
    private final List<RdmaBuffer> buffers = new ArrayList<>();
    /** Knows every map output's token, as the driver would (a failed read asks it again). */
    private final DriverRegistryRef driver = new DriverRegistryRef();

    @BeforeEach
    void start() {
        owner = RdmaManager.newBuilder().build();
        SparkConf conf = new SparkConf(false)
                .set("spark.rdma4j.shuffle.fetchBufferSize", "4k")
                .set("spark.rdma4j.shuffle.maxOpsPerAction", "2");
        reader = new ExecutorShuffleState(new RdmaShuffleConf(conf), "reader", null, () -> driver);
    }

    @AfterEach
    void stop() {
        reader.close();
        buffers.forEach(RdmaBuffer::close);
        owner.close();
    }

    /** A map output of {@code lengths.length} partitions whose byte i of partition p is (mapId + p + i). */
    private BlockFetcher.MapRead mapOutput(long mapId, long[] lengths, int start, int end) {
        long[] offsets = MapOutputToken.offsetsOf(lengths);
        long total = offsets[lengths.length];
        RdmaBuffer buffer = owner.allocate(total).join();
        buffers.add(buffer);
        for (int p = 0; p < lengths.length; p++) {
            for (long i = 0; i < lengths[p]; i++) {
                buffer.segment().set(ValueLayout.JAVA_BYTE, offsets[p] + i, (byte) (mapId + p + i));
            }
        }
        MapOutputToken output = new MapOutputToken(mapId, "owner", buffer.remote().toBytes(), offsets);
        driver.registry.publish(SHUFFLE, output);
        return new BlockFetcher.MapRead(BlockManagerId.apply("owner", "localhost", 1, scala.Option.empty()),
                mapId, (int) mapId, output, start, end);
    }

    private static byte[] drain(BlockFetcher.Block block) throws IOException {
        return block.stream().readAllBytes();
    }

    @Test
    void everyNonEmptyBlockArrivesWithTheOwnersBytesAcrossPackedAndOversizedActions() throws IOException {
        List<BlockFetcher.MapRead> reads = List.of(
                mapOutput(1, new long[] {100, 0, 300, 50}, 1, 4),     // packed with the next
                mapOutput(2, new long[] {10, 1000, 1, 7}, 1, 4),
                mapOutput(3, new long[] {5, 9000, 2, 0}, 1, 4),       // more than a staging buffer
                mapOutput(4, new long[] {1, 0, 0, 0}, 1, 4),          // nothing in the range
                mapOutput(5, new long[] {0, 20, 30, 40}, 1, 4));      // a third action (two ops per action)
        TempShuffleReadMetrics metrics = new TempShuffleReadMetrics();
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, reads, metrics);
        List<String> seen = new ArrayList<>();
        long bytes = 0;
        for (BlockFetcher.Block block = fetcher.nextBlock(); block != null; block = fetcher.nextBlock()) {
            byte[] got = drain(block);
            long mapId = block.id().mapId();
            int p = block.id().reduceId();
            byte[] expected = new byte[got.length];
            for (int i = 0; i < expected.length; i++) {
                expected[i] = (byte) (mapId + p + i);
            }
            assertArrayEquals(expected, got, "bytes of block " + block.id());
            seen.add(mapId + ":" + p + ":" + got.length);
            bytes += got.length;
        }
        fetcher.free();
        assertEquals(List.of("1:2:300", "1:3:50", "2:1:1000", "2:2:1", "2:3:7", "3:1:9000", "3:2:2",
                "5:1:20", "5:2:30", "5:3:40"), seen);
        assertEquals(bytes, metrics.remoteBytesRead());
        assertEquals(10, metrics.remoteBlocksFetched());
        Map<String, long[]> routes = fetcher.routes();
        assertEquals(1, routes.size(), "one transport carries them all: " + routes.keySet());
        assertEquals(bytes, routes.values().iterator().next()[1]);
    }

    /** Every block of the fetch, as "mapId:partition:length", its bytes checked. */
    private static List<String> readAll(BlockFetcher fetcher) throws IOException {
        List<String> seen = new ArrayList<>();
        for (BlockFetcher.Block block = fetcher.nextBlock(); block != null; block = fetcher.nextBlock()) {
            byte[] got = drain(block);
            long mapId = block.id().mapId();
            int p = block.id().reduceId();
            for (int i = 0; i < got.length; i++) {
                assertEquals((byte) (mapId + p + i), got[i], "byte " + i + " of block " + block.id());
            }
            seen.add(mapId + ":" + p + ":" + got.length);
        }
        fetcher.free();
        return seen;
    }

    @Test
    void aBlockLargerThanAStagingBufferIsReadInStagingSizePiecesIntoTheTwoStagingBuffersOnly() throws IOException {
        // blocks of 9000 and 8000 B with 4 KiB staging buffers: three and two pieces, a block crossing pieces
        BlockFetcher.MapRead first = mapOutput(11, new long[] {9000, 10}, 0, 2);
        BlockFetcher.MapRead second = mapOutput(12, new long[] {5, 8000}, 0, 2);
        for (int i = 0; i < 3; i++) {
            assertEquals(List.of("11:0:9000", "11:1:10"),
                    readAll(new BlockFetcher(reader, SHUFFLE, List.of(first), new TempShuffleReadMetrics())));
            assertEquals(List.of("12:0:5", "12:1:8000"),
                    readAll(new BlockFetcher(reader, SHUFFLE, List.of(second), new TempShuffleReadMetrics())));
        }
        assertEquals(List.of("11:0:9000", "11:1:10", "12:0:5", "12:1:8000"),
                readAll(new BlockFetcher(reader, SHUFFLE, List.of(first, second), new TempShuffleReadMetrics())));
        assertEquals(2 * 4096, reader.stagingBytesAllocated(),
                "one staging buffer being read, one being filled, nothing larger");
    }

    @Test
    void aBlockLeftUnfinishedIsSkippedToTheNextBlockAcrossItsPieces() throws IOException {
        BlockFetcher.MapRead large = mapOutput(13, new long[] {9000, 5000, 3}, 0, 3);
        BlockFetcher.MapRead after = mapOutput(14, new long[] {7, 9}, 0, 2);
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, List.of(large, after), new TempShuffleReadMetrics());
        BlockFetcher.Block abandoned = fetcher.nextBlock();
        assertEquals(13, abandoned.id().mapId());
        assertEquals(0, abandoned.id().reduceId());
        assertEquals(10, abandoned.stream().readNBytes(10).length);   // then left: the rest is never read
        assertEquals(List.of("13:1:5000", "13:2:3", "14:0:7", "14:1:9"), readAll(fetcher));
    }

    @Test
    void aMapOutputReleasedWhileItsLargeBlockIsReadFailsThatBlocksStreamWithItsFetchFailure() {
        int length = 5 * 4096;                                  // five pieces
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, List.of(mapOutput(16, new long[] {length}, 0, 1)),
                new TempShuffleReadMetrics());
        BlockFetcher.Block block = fetcher.nextBlock();
        InputStream stream = block.stream();
        byte[] got = new byte[length];
        int n = 0;
        Throwable failure = null;
        try {
            n = stream.readNBytes(got, 0, 100);
            buffers.get(0).close();                             // the owner releases it while the reducer reads
            for (int r; n < length && (r = stream.read(got, n, length - n)) > 0; ) {
                n += r;
            }
        } catch (Throwable e) {
            failure = e;
        }
        fetcher.free();
        FetchFailedException fetchFailed = assertInstanceOf(FetchFailedException.class, failure,
                "read " + n + " of " + length + " B");
        assertEquals(16, ((org.apache.spark.FetchFailed) fetchFailed.toTaskFailedReason()).mapId());
        assertTrue(n < length, n + " B");
        for (int i = 0; i < n; i++) {
            assertEquals((byte) (16 + i), got[i], "byte " + i + " handed out before the failure");
        }
    }

    @Test
    void aReleasedBufferIsAFetchFailureOfItsOwnMapOutput() {
        BlockFetcher.MapRead fine = mapOutput(7, new long[] {64, 64}, 0, 2);
        BlockFetcher.MapRead released = mapOutput(8, new long[] {64, 64}, 0, 2);
        buffers.get(1).close();
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, List.of(fine, released), new TempShuffleReadMetrics());
        FetchFailedException failure = assertThrows(FetchFailedException.class, fetcher::nextBlock);
        fetcher.free();
        assertEquals(8, failure.toTaskFailedReason() instanceof org.apache.spark.FetchFailed f ? f.mapId() : -1);
        assertTrue(failure.getMessage().contains("rdma4j read of 128 B failed"), failure.getMessage());
    }

    @Test
    void anOwnerThatClosedIsAFetchFailureNotAHang() {
        BlockFetcher.MapRead read = mapOutput(9, new long[] {4096, 1}, 0, 2);
        owner.close();
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, List.of(read), new TempShuffleReadMetrics());
        FetchFailedException failure = assertThrows(FetchFailedException.class, fetcher::nextBlock);
        fetcher.free();
        org.apache.spark.FetchFailed reason = (org.apache.spark.FetchFailed) failure.toTaskFailedReason();
        assertEquals(9, reason.mapId());
        assertEquals(SHUFFLE, reason.shuffleId());
    }

    @Test
    void aMapOutputWithNothingInTheRangeIsNeverRead() {
        BlockFetcher.MapRead empty = mapOutput(10, new long[] {8, 0, 0}, 1, 3);
        buffers.get(0).close();                                 // a read would fail
        BlockFetcher fetcher = new BlockFetcher(reader, SHUFFLE, List.of(empty), new TempShuffleReadMetrics());
        assertNull(fetcher.nextBlock());
        fetcher.free();
    }
}
