/**
 * {@code rdma-perf}: RDMA read/write bandwidth, message rate and latency between two rdma4j
 * managers ({@link io.rdma4j.bench.cli.RdmaPerf}, command line parsed by picocli).
 *
 * <p>Pure parts, unit-tested and thread-safe: {@code RunOptions}/{@code CommonOptions} (the
 * options), {@link io.rdma4j.bench.cli.Sizes} (byte sizes), {@link io.rdma4j.bench.cli.Stats}
 * (rates; percentiles and moments from an HdrHistogram), {@link io.rdma4j.bench.cli.Report}
 * (table and hand-written JSON) and {@code SvgPlot}.
 *
 * <p><b>Processes.</b> {@code rdma-perf serve} ({@code PerfServer}) runs a manager and a small
 * rendezvous listener ({@code Rendezvous}: text lines over TCP) that hands each client the tokens
 * of buffers of the sizes it asks for, until the client disconnects. The measuring side
 * ({@code PerfClient}) connects to one: with {@code --peer}, anywhere; without, a
 * {@code serve --port 0 --once} that {@code LoopbackServer} starts in a second JVM here.
 *
 * <p><b>Threads.</b> {@code Measurement} runs {@code --inflight} platform threads, each submitting
 * and awaiting its own action back to back and recording into its own histogram; the calling
 * thread waits for them and redraws the progress line. The transfers themselves run on the
 * transports' threads of both processes.
 *
 * <pre>
 *   measuring process                                         serve process
 *   inflight threads ──submit──▶ transport threads ◀══ tcp ══▶ transport threads ──▶ its buffers
 *   main thread ◀──── TOKEN lines (rendezvous socket) ─────── client thread (one per client)
 * </pre>
 *
 * <p><b>Ownership.</b> The measuring side owns its source and sink segments: one shared arena,
 * since the transport's threads read and write them, closed at the end. The server's manager
 * owns the buffer it allocated per client; the prefixes it registered are released, and the
 * buffer closed, when that client disconnects.
 */
package io.rdma4j.bench.cli;
