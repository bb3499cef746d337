package io.rdma4j.bench.cli;

import java.util.Arrays;

/**
 * The arithmetic behind rdma-perf's table: pure functions over latency samples in nanoseconds,
 * thread-safe.
 */
public final class Stats {

    /** Bytes each size should move when the iteration count is adaptive. */
    public static final long ADAPTIVE_TARGET_BYTES = 256L << 20;
    /** Fewest measured iterations per size. */
    public static final int MIN_ITERS = 10;
    /** Most measured iterations per size. */
    public static final int MAX_ITERS = 10_000;

    private Stats() {
    }

    /**
     * The nearest-rank percentile: the smallest sample such that at least {@code p} percent of
     * the samples are less than or equal to it, i.e. {@code sorted[ceil(p/100 * n) - 1]}
     * ({@code p = 0} gives the minimum).
     *
     * @param sorted samples in ascending order (not modified)
     * @param p      the percentile, in {@code [0, 100]}
     * @throws IllegalArgumentException when there are no samples or {@code p} is out of range
     */
    public static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile out of [0, 100]: " + p);
        }
        long rank = (long) Math.ceil(p / 100.0 * sorted.length);
        return sorted[(int) Math.max(0, rank - 1)];
    }

    /** The arithmetic mean; throws {@link IllegalArgumentException} when there are no samples. */
    public static double mean(long[] samples) {
        if (samples.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        double sum = 0;
        for (long s : samples) {
            sum += s;
        }
        return sum / samples.length;
    }

    /**
     * Throughput in MB/s, where 1 MB is 10^6 bytes.
     *
     * @param bytesPerOp   bytes each op moved
     * @param ops          ops completed
     * @param elapsedNanos wall time for all of them
     * @return the rate, or 0 when no time elapsed
     */
    public static double megabytesPerSecond(long bytesPerOp, long ops, long elapsedNanos) {
        if (elapsedNanos <= 0) {
            return 0;
        }
        return (double) bytesPerOp * ops / elapsedNanos * 1e9 / 1e6;
    }

    /**
     * Measured iterations for a size when the user gave none: enough to move
     * {@link #ADAPTIVE_TARGET_BYTES}, clamped to {@code [MIN_ITERS, MAX_ITERS]}.
     */
    public static int adaptiveIterations(long sizeBytes) {
        long n = (ADAPTIVE_TARGET_BYTES + sizeBytes - 1) / sizeBytes;
        return (int) Math.max(MIN_ITERS, Math.min(MAX_ITERS, n));
    }

    /**
     * Warmup iterations for a size when the user gave none: a fifth of its adaptive count, at
     * least 2, at most 1000. It depends on the size only, so {@code --iters 20} still warms an
     * 8-byte op up properly.
     */
    public static int warmupIterations(long sizeBytes) {
        return Math.max(2, Math.min(1000, adaptiveIterations(sizeBytes) / 5));
    }

    /**
     * Summarises one op and size.
     *
     * @param latencies    per-op latencies in nanoseconds (sorted in place)
     * @param elapsedNanos wall time of the measured loop
     */
    public static PerfResult summarise(String op, long sizeBytes, String transport, long[] latencies, long elapsedNanos) {
        Arrays.sort(latencies);
        return new PerfResult(op, sizeBytes, latencies.length, transport,
                megabytesPerSecond(sizeBytes, latencies.length, elapsedNanos),
                mean(latencies) / 1e3, percentile(latencies, 50) / 1e3, percentile(latencies, 99) / 1e3);
    }
}
