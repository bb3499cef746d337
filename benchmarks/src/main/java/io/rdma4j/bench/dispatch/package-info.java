/**
 * What the manager itself costs per op, with the transport taken out: its only transport is the
 * in-memory {@code BenchTransportProvider} of {@code io.rdma4j.bench.ring} (a
 * {@code MemorySegment.copy} on the calling thread).
 *
 * <ul>
 * <li>{@code DispatchBenchmark}: one 8-byte read through {@code RdmaManager}: routing, token, deadline, future.</li>
 * <li>{@code BatchDispatchBenchmark}: the cost per op of one action of many 8-byte reads.</li>
 * <li>{@code WatchdogBenchmark}: arming and disarming a watchdog guard that never fires, as around each op.</li>
 * </ul>
 */
package io.rdma4j.bench.dispatch;
