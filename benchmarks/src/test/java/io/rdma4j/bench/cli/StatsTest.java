package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class StatsTest {

    @Test
    void percentile_isNearestRank() {
        long[] ten = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
        assertEquals(50, Stats.percentile(ten, 50));   // rank ceil(5.0) = 5
        assertEquals(100, Stats.percentile(ten, 99));  // rank ceil(9.9) = 10
        assertEquals(10, Stats.percentile(ten, 10));   // rank 1
        assertEquals(20, Stats.percentile(ten, 10.1)); // rank ceil(1.01) = 2
        assertEquals(100, Stats.percentile(ten, 100));
    }

    @Test
    void percentile_neverInterpolates() {
        long[] two = {1, 1000};
        assertEquals(1, Stats.percentile(two, 50));
        assertEquals(1000, Stats.percentile(two, 51));
    }

    @Test
    void percentile_ofHundredSamples_isTheRankedSample() {
        long[] hundred = new long[100];
        for (int i = 0; i < 100; i++) {
            hundred[i] = i + 1;
        }
        assertEquals(50, Stats.percentile(hundred, 50));
        assertEquals(99, Stats.percentile(hundred, 99));
    }

    @Test
    void percentile_zero_isMinimum() {
        assertEquals(3, Stats.percentile(new long[]{3, 4}, 0));
    }

    @Test
    void percentile_badInput_throws() {
        assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new long[0], 50));
        assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new long[]{1}, 101));
        assertThrows(IllegalArgumentException.class, () -> Stats.percentile(new long[]{1}, Double.NaN));
    }

    @Test
    void mean_isArithmetic() {
        assertEquals(2.5, Stats.mean(new long[]{1, 2, 3, 4}));
    }

    @Test
    void megabytesPerSecond_usesDecimalMegabytes() {
        assertEquals(1.0, Stats.megabytesPerSecond(1000, 1000, 1_000_000_000L), 1e-9);
        assertEquals(64 * 1048576 * 10 / 2.0 / 1e6, Stats.megabytesPerSecond(64 << 20, 10, 2_000_000_000L), 1e-9);
        assertEquals(0, Stats.megabytesPerSecond(8, 1, 0));
    }

    @Test
    void adaptiveIterations_movesTargetBytesWithinBounds() {
        assertEquals(10_000, Stats.adaptiveIterations(8));
        assertEquals(1024, Stats.adaptiveIterations(256 << 10));
        assertEquals(256, Stats.adaptiveIterations(1 << 20));
        assertEquals(10, Stats.adaptiveIterations(64 << 20));
        assertEquals(10, Stats.adaptiveIterations(1L << 30));
    }

    @Test
    void warmupIterations_isAFifthOfTheAdaptiveCountWithinBounds() {
        assertEquals(1000, Stats.warmupIterations(8));
        assertEquals(204, Stats.warmupIterations(256 << 10));
        assertEquals(51, Stats.warmupIterations(1 << 20));
        assertEquals(2, Stats.warmupIterations(64 << 20));
    }

    @Test
    void summarise_sortsAndConvertsToMicroseconds() {
        long[] nanos = {3000, 1000, 2000};
        PerfResult r = Stats.summarise("read", 1_000_000, "tcp", nanos, 3_000_000);
        assertEquals(3, r.iters());
        assertEquals(1000.0, r.bandwidthMBps(), 1e-9);
        assertEquals(2.0, r.latAvgUs(), 1e-9);
        assertEquals(2.0, r.latP50Us(), 1e-9);
        assertEquals(3.0, r.latP99Us(), 1e-9);
    }
}
