package io.rdma4j.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaManager;
import java.time.Duration;
import java.util.Map;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.Test;

/** {@code spark.rdma4j.*} reaches the executor's manager as {@code rdma.*}; bad keys fail the start. */
class RdmaShuffleConfTest {

    @Test
    void anRdma4jSettingGivenAsSparkConfReachesTheManager() {
        RdmaShuffleConf conf = new RdmaShuffleConf(new SparkConf(false)
                .set("spark.rdma4j.shm.disable", "true")
                .set("spark.rdma4j.tcp.parallelism", "3")
                .set("spark.other", "x"));
        assertEquals(Map.of("rdma.shm.disable", "true", "rdma.tcp.parallelism", "3"), conf.managerSettings());
        try (RdmaManager manager = conf.buildManager()) {
            assertFalse(manager.transports().contains("shm"), manager.transports().toString());
            assertTrue(manager.transports().contains("tcp"), manager.transports().toString());
        }
    }

    @Test
    void aMistypedRdma4jSettingFailsTheManagersStart() {
        RdmaShuffleConf conf = new RdmaShuffleConf(new SparkConf(false).set("spark.rdma4j.tcp.paralelism", "3"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, conf::buildManager);
        assertTrue(e.getMessage().contains("rdma.tcp.paralelism"), e.getMessage());
    }

    @Test
    void anUnknownShuffleKeyIsRefusedByName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RdmaShuffleConf(new SparkConf(false).set("spark.rdma4j.shuffle.fetchTimout", "5s")));
        assertTrue(e.getMessage().contains("spark.rdma4j.shuffle.fetchTimout"), e.getMessage());
    }

    @Test
    void theShufflesOwnKeysAreReadWithSparksUnits() {
        RdmaShuffleConf conf = new RdmaShuffleConf(new SparkConf(false)
                .set("spark.rdma4j.shuffle.fetchTimeout", "2min")
                .set("spark.rdma4j.shuffle.fetchBufferSize", "1m")
                .set("spark.rdma4j.shuffle.maxOpsPerAction", "8"));
        assertEquals(Duration.ofMinutes(2), conf.fetchTimeout());
        assertEquals(1 << 20, conf.fetchBufferSize());
        assertEquals(8, conf.maxOpsPerAction());
        assertTrue(conf.managerSettings().isEmpty(), "the shuffle's keys are not rdma4j settings");
    }

    @Test
    void aStagingBufferOutOfRangeIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> new RdmaShuffleConf(new SparkConf(false).set("spark.rdma4j.shuffle.fetchBufferSize", "100")));
    }

    @Test
    void mapOutputsAreMappedFilesUnlessCopiedIsAsked() {
        assertEquals(RdmaShuffleConf.MapOutputs.MAPPED, new RdmaShuffleConf(new SparkConf(false)).mapOutputs());
        assertEquals(RdmaShuffleConf.MapOutputs.COPIED, new RdmaShuffleConf(new SparkConf(false)
                .set("spark.rdma4j.shuffle.mapOutputs", "copied")).mapOutputs());
    }

    @Test
    void anUnknownMapOutputsValueIsRefusedWithTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new RdmaShuffleConf(new SparkConf(false).set("spark.rdma4j.shuffle.mapOutputs", "mmap")));
        assertTrue(e.getMessage().contains("mmap") && e.getMessage().contains("mapped") && e.getMessage().contains("copied"),
                e.getMessage());
    }
}
