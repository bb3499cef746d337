/**
 * Performance measurement for rdma4j: JMH benchmarks and the {@code rdma-perf} tool.
 *
 * <ul>
 *   <li>{@link io.rdma4j.bench.cli}: {@code rdma-perf}, bandwidth and latency between two
 *       processes ({@code bin/rdma-perf}).</li>
 *   <li>{@link io.rdma4j.bench.ring}: the registration path, Disruptor ring against a lock.</li>
 *   <li>{@link io.rdma4j.bench.dispatch}: what the manager itself costs per op, through an
 *       in-memory transport.</li>
 *   <li>{@link io.rdma4j.bench.shm}: the same-host transport and cross-memory attach, against
 *       a second JVM.</li>
 *   <li>{@link io.rdma4j.bench.verbs}: the floor under verbs latency, a bare post-and-poll loop
 *       over the bindings.</li>
 *   <li>{@link io.rdma4j.bench.tcp}: transfers over the TCP transport against plain sockets and
 *       memcpy.</li>
 * </ul>
 *
 * <p>Everything builds into {@code benchmarks/target/benchmarks.jar}, a shaded jar whose main
 * class is {@code org.openjdk.jmh.Main}. Nothing here runs during {@code mvn test} except the
 * unit tests of the tool's own arithmetic and parsing, and one end-to-end run of the tool that
 * skips when no TCP transport is available. See {@code benchmarks/README.md}.
 */
package io.rdma4j.bench;
