/**
 * Baselines over the verbs bindings alone, for comparisons with {@code rdma-perf} on RDMA
 * devices: {@link io.rdma4j.bench.verbs.ReadLatencyFloor}, the 8-byte read latency of a bare
 * post-and-poll loop in Java. Run by {@code bin/rdma-perf-softroce}.
 */
package io.rdma4j.bench.verbs;
