/**
 * Remote access to off-heap memory: register a {@link java.lang.foreign.MemorySegment} with an
 * {@link io.rdma4j.RdmaManager}, send its {@link io.rdma4j.RdmaRemoteBuffer} token anywhere, and
 * let the holder read or write it over the fastest transport both sides run.
 *
 * <pre>
 *   owner process                                   holder process
 *   -------------                                   --------------
 *   manager.register(segment) / allocate(n)
 *        |  (registration thread: every transport)
 *        v
 *   RdmaRemoteBuffer --- toBytes() --- any channel ---&gt; fromBytes()
 *                                                       manager.read / write / newAction()
 *   transports serve the bytes   &lt;=== verbs or TCP ===  (routed to the fastest shared transport)
 *   control endpoint             &lt;--- release, readiness, handshakes
 * </pre>
 *
 * <p><b>Errors.</b> Misuse (heap or closed segments, size mismatches, malformed tokens) throws
 * {@link java.lang.IllegalArgumentException} at the call. Everything else fails the returned
 * future with an {@link io.rdma4j.RdmaException}: {@link io.rdma4j.RdmaSubmitException} and
 * {@link io.rdma4j.RdmaReleaseException} list each transport's error, whose types say what
 * happened ({@link io.rdma4j.RdmaTimeoutException}, {@link io.rdma4j.RemoteAccessException},
 * {@link io.rdma4j.PeerUnreachableException}).
 *
 * <p><b>Memory ownership.</b> Segments passed to {@code register} and to actions stay the
 * caller's; {@link io.rdma4j.RdmaManager#allocate} memory is the manager's and is freed only
 * after every transport released it and the last remote access finished.
 */
package io.rdma4j;
