package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class StatsTest {

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
    void summarise_takesPercentilesAndMomentsFromTheHistogram_inMicroseconds() {
        Histogram h = new Histogram(Measurement.SIGNIFICANT_DIGITS);
        for (long ns : new long[]{1000, 1500, 2000}) { // exact in a 3-digit histogram
            h.recordValue(ns);
        }
        PerfResult r = Stats.summarise("read", 1_000_000, "tcp", h, 3_000_000, 1, 1);
        assertEquals(3, r.iters());
        assertEquals(1000.0, r.bandwidthMBps(), 1e-9);
        assertEquals(1000.0, r.msgRate(), 1e-9);
        assertEquals(1.5, r.latAvgUs(), 1e-9);
        assertEquals(1.5, r.latP50Us(), 1e-9);
        assertEquals(2.0, r.latP99Us(), 1e-9);
        assertEquals(2.0, r.latP999Us(), 1e-9);
        assertEquals(2.0, r.latMaxUs(), 1e-9);
        assertEquals(Math.sqrt(0.5 * 0.5 * 2 / 3), r.latStddevUs(), 1e-9);
        assertEquals(0.003, r.elapsedSeconds(), 1e-12);
    }

    @Test
    void summarise_countsEveryOpOfABatch_forBandwidthAndMessageRate() {
        Histogram h = new Histogram(Measurement.SIGNIFICANT_DIGITS);
        h.recordValueWithCount(1000, 10);
        PerfResult r = Stats.summarise("write", 100, "tcp", h, 1_000_000, 4, 2);
        assertEquals(10, r.iters());
        assertEquals(40 / 1e-3, r.msgRate(), 1e-6);
        assertEquals(40 * 100 / 1e-3 / 1e6, r.bandwidthMBps(), 1e-9);
        assertEquals(4, r.batch());
        assertEquals(2, r.inflight());
    }

    @Test
    void summarise_ofNothing_throws() {
        assertThrows(IllegalArgumentException.class,
                () -> Stats.summarise("read", 8, "tcp", new Histogram(3), 1, 1, 1));
    }

    @Test
    void perSecond_isZeroWhenNoTimePassed() {
        assertEquals(2e9, Stats.perSecond(2, 1), 1e-3);
        assertEquals(0, Stats.perSecond(5, 0));
    }
}
