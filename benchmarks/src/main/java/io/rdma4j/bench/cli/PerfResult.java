package io.rdma4j.bench.cli;

import java.util.Objects;

/**
 * One row of rdma-perf's output: an op at one size. Immutable.
 *
 * @param op             {@code read} or {@code write}
 * @param sizeBytes      bytes per op
 * @param iters          measured actions
 * @param transport      the transport that carried them ({@code tcp}, {@code ibverbs})
 * @param bandwidthMBps  throughput in MB/s (10^6 bytes per second), every op of every action counted
 * @param latAvgUs       mean latency of an action in microseconds
 * @param latP50Us       median latency in microseconds
 * @param latP99Us       99th percentile latency in microseconds
 * @param msgRate        ops per second (actions times ops per action)
 * @param latP999Us      99.9th percentile latency in microseconds
 * @param latStddevUs    standard deviation of the latency in microseconds
 * @param latMaxUs       largest latency in microseconds
 * @param batch          ops per action
 * @param inflight       actions outstanding at once
 * @param elapsedSeconds wall time of the measured part
 */
public record PerfResult(String op, long sizeBytes, long iters, String transport, double bandwidthMBps,
                         double latAvgUs, double latP50Us, double latP99Us, double msgRate, double latP999Us,
                         double latStddevUs, double latMaxUs, int batch, int inflight, double elapsedSeconds) {

    public PerfResult {
        Objects.requireNonNull(op, "op");
        Objects.requireNonNull(transport, "transport");
    }

    /** The series this row belongs to in a plot: transport and op. */
    String series() {
        return transport + " " + op;
    }
}
