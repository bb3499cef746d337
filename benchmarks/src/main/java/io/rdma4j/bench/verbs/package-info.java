/**
 * Baselines over the verbs bindings alone, for comparisons with {@code rdma-perf} on RDMA
 * devices: {@link io.rdma4j.bench.verbs.ReadLatencyFloor}, the 8-byte read latency of a bare
 * post-and-poll loop in Java. Run by {@code bin/rdma-perf-softroce}.
 *
 * <ul>
 * <li>{@code ReadLatencyFloor}: an 8-byte RDMA READ through the bindings alone, no transport or manager.</li>
 * <li>{@code DowncallArgumentsBenchmark}: what a downcall's pointer arguments cost.</li>
 * <li>{@code WorkRequestFillBenchmark}: what filling the work request of a post costs, whole or only what changed.</li>
 * </ul>
 */
package io.rdma4j.bench.verbs;
