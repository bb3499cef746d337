/**
 * {@code rdma-perf}: RDMA read/write bandwidth and latency between two rdma4j managers in two
 * processes ({@link io.rdma4j.bench.cli.RdmaPerf}).
 *
 * <p>Pure parts, unit-tested and thread-safe: {@link io.rdma4j.bench.cli.PerfOptions} (the command
 * line), {@link io.rdma4j.bench.cli.Sizes} (byte sizes), {@link io.rdma4j.bench.cli.Stats}
 * (nearest-rank percentiles, MB/s, adaptive iteration counts) and
 * {@link io.rdma4j.bench.cli.Report} (table and hand-written JSON).
 *
 * <p><b>Threads and processes.</b> The client measures on its main thread, one op in flight at
 * a time; the transfers themselves run on the transport's threads of both processes. Two daemon
 * threads drain the server process's stdout (tokens) and stderr (kept for error reports).
 *
 * <pre>
 *   client process                                          server process
 *   main thread ──submit──▶ transport threads ◀══ TCP ══▶ transport threads ──▶ server buffer
 *        ▲                        │
 *        └──── future completes ◀─┘
 *   stdout reader thread ◀──── TOKEN lines ────────────────── main thread (then blocks on stdin)
 *   stderr reader thread ◀──── log lines ───────────────────
 * </pre>
 *
 * <p><b>Ownership.</b> The client owns its source and sink segments: one shared arena, since the
 * transport's threads read and write them, closed at the end; the server's manager owns the buffer it allocated, and the prefixes it registered
 * are released when that manager closes.
 */
package io.rdma4j.bench.cli;
