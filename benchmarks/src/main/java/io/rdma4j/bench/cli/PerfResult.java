package io.rdma4j.bench.cli;

import java.util.Objects;

/**
 * One row of rdma-perf's output: an op at one size. Immutable.
 *
 * @param op            {@code read} or {@code write}
 * @param sizeBytes     bytes per op
 * @param iters         measured ops
 * @param transport     the transport that carried them ({@code tcp}, {@code ibverbs})
 * @param bandwidthMBps throughput in MB/s (10^6 bytes per second)
 * @param latAvgUs      mean latency in microseconds
 * @param latP50Us      median latency (nearest rank) in microseconds
 * @param latP99Us      99th percentile latency (nearest rank) in microseconds
 */
public record PerfResult(String op, long sizeBytes, int iters, String transport, double bandwidthMBps,
                         double latAvgUs, double latP50Us, double latP99Us) {

    public PerfResult {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(transport, "transport");
    }
}
