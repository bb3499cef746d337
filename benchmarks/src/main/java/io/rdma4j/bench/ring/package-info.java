/**
 * JMH benchmarks of the registration path: {@link io.rdma4j.bench.ring.RegistrationRingBenchmark}
 * compares {@code RdmaManager}'s Disruptor ring with a lock-based baseline
 * ({@code SynchronizedManager}), both over the in-memory
 * {@link io.rdma4j.bench.ring.BenchTransportProvider} transport.
 *
 * <p><b>Threads.</b> With the ring, benchmark threads only publish; the manager's consumer
 * thread does the work and completes the futures. With the baseline, benchmark threads do the
 * work themselves, one at a time under the lock.
 *
 * <pre>
 *   ring:          caller ──publish──▶ [ring slots] ──▶ consumer thread: id, key, backend.register, table
 *                  caller ◀──────────── future completed ──────┘
 *   synchronized:  caller ──lock──▶ id, key, backend.register, table ──unlock──▶ completed future
 * </pre>
 */
package io.rdma4j.bench.ring;
