/**
 * Benchmarks of the same-host transport and of the mechanisms under it (cross-memory attach
 * against {@link java.lang.foreign.MemorySegment#copy}). {@link io.rdma4j.bench.shm.PeerMemory}
 * is the second JVM whose memory they reach.
 */
package io.rdma4j.bench.shm;
