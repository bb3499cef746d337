/**
 * Benchmarks of the same-host transport and of the mechanisms under it (cross-memory attach
 * against {@link java.lang.foreign.MemorySegment#copy}). {@link io.rdma4j.bench.shm.PeerMemory}
 * is the second JVM whose memory they reach.
 *
 * <ul>
 * <li>{@code CrossMemoryCopyBenchmark}: cross-memory attach next to {@code MemorySegment.copy}, before any transport logic.</li>
 * <li>{@code ShmTransferBenchmark}: reads and writes through rdma4j of a buffer a second JVM owns.</li>
 * <li>{@code PeerMemory}: the second JVM of {@code CrossMemoryCopyBenchmark}: one native segment.</li>
 * <li>{@code TransferOwner}: the second JVM of {@code ShmTransferBenchmark}: a manager owning one buffer.</li>
 * </ul>
 */
package io.rdma4j.bench.shm;
