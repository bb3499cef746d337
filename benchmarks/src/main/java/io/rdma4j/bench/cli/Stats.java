package io.rdma4j.bench.cli;

import org.HdrHistogram.Histogram;

/**
 * The arithmetic behind rdma-perf's table: rates from counts and wall time, percentiles and
 * moments from an HdrHistogram of latencies in nanoseconds. Pure functions, thread-safe.
 */
public final class Stats {

    /** Bytes each size should move when the iteration count is adaptive (warmup with --iters). */
    public static final long ADAPTIVE_TARGET_BYTES = 256L << 20;
    /** Fewest iterations of an adaptive count. */
    public static final int MIN_ITERS = 10;
    /** Most iterations of an adaptive count. */
    public static final int MAX_ITERS = 10_000;

    private Stats() {
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
     * Ops per second.
     *
     * @return the rate, or 0 when no time elapsed
     */
    public static double perSecond(long ops, long elapsedNanos) {
        return elapsedNanos <= 0 ? 0 : ops * 1e9 / elapsedNanos;
    }

    /**
     * An iteration count for a size: enough to move {@link #ADAPTIVE_TARGET_BYTES}, clamped to
     * {@code [MIN_ITERS, MAX_ITERS]}.
     */
    public static int adaptiveIterations(long sizeBytes) {
        long n = (ADAPTIVE_TARGET_BYTES + sizeBytes - 1) / sizeBytes;
        return (int) Math.max(MIN_ITERS, Math.min(MAX_ITERS, n));
    }

    /**
     * Warmup actions for a size with {@code --iters} and no {@code --warmup}: a fifth of its
     * adaptive count, at least 2, at most 1000. It depends on the size only, so {@code --iters 20}
     * still warms an 8-byte op up properly.
     */
    public static int warmupIterations(long sizeBytes) {
        return Math.max(2, Math.min(1000, adaptiveIterations(sizeBytes) / 5));
    }

    /**
     * Summarises one op and size.
     *
     * @param latencies    latency of each measured action, in nanoseconds
     * @param elapsedNanos wall time of the measured part
     * @param batch        ops per action
     * @param inflight     actions outstanding at once
     * @throws IllegalArgumentException when nothing was measured
     */
    public static PerfResult summarise(String op, long sizeBytes, String transport, Histogram latencies,
                                       long elapsedNanos, int batch, int inflight) {
        long actions = latencies.getTotalCount();
        if (actions == 0) {
            throw new IllegalArgumentException("no samples");
        }
        long ops = actions * batch;
        return new PerfResult(op, sizeBytes, actions, transport,
                megabytesPerSecond(sizeBytes, ops, elapsedNanos),
                latencies.getMean() / 1e3,
                latencies.getValueAtPercentile(50) / 1e3,
                latencies.getValueAtPercentile(99) / 1e3,
                perSecond(ops, elapsedNanos),
                latencies.getValueAtPercentile(99.9) / 1e3,
                latencies.getStdDeviation() / 1e3,
                latencies.getMaxValue() / 1e3,
                batch, inflight, elapsedNanos / 1e9);
    }
}
