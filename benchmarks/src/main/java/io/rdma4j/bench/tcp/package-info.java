/**
 * JMH benchmarks of transfers over the TCP transport between two managers in one JVM
 * ({@link io.rdma4j.bench.tcp.TcpTransferBenchmark}), measured in the same run as a plain
 * {@code SocketChannel} copy, a plain socket ping-pong and a memcpy.
 *
 * <p><b>Threads.</b> The benchmark thread submits one transfer at a time and waits for it; the
 * bytes move on the transport's threads of both managers. The socket baseline has one server
 * thread, started in the trial's setup and stopped by closing the connection.
 *
 * <pre>
 *   benchmark thread ──submit──▶ user manager (tcp) ══ loopback ══▶ owner manager (tcp) ──▶ 64 MiB buffer
 *   benchmark thread ──SocketChannel══ loopback ══▶ server thread (consumes / sends / echoes)
 * </pre>
 */
package io.rdma4j.bench.tcp;
