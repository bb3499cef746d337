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
 *
 * <h2>Map of the package</h2>
 * <p><b>Command line</b>:
 * <ul>
 * <li>{@code RdmaPerf}: the {@code rdma-perf} command and its subcommands (public).</li>
 * <li>{@code RunOptions}: what the measuring side measures and where the results go.</li>
 * <li>{@code CommonOptions}: the options both sides take: the transport and its tuning.</li>
 * <li>{@code Ints}: whole-number options with their ranges.</li>
 * <li>{@code Sizes}: byte sizes as people type them and as the table shows them (public).</li>
 * <li>{@code Durations}: durations as the tool prints them.</li>
 * </ul>
 *
 * <p><b>Processes and the rendezvous</b>:
 * <ul>
 * <li>{@code PerfServer}: {@code rdma-perf serve}: a manager and the rendezvous listener.</li>
 * <li>{@code PerfClient}: the measuring side against a server's buffers.</li>
 * <li>{@code LoopbackServer}: the server of a loopback run, in a second JVM.</li>
 * <li>{@code Rendezvous}: the text-line protocol that hands the client its buffers' tokens.</li>
 * <li>{@code Transports}: everything the tool asks of the transport layer; the one place that knows the SPI's type names.</li>
 * <li>{@code TestPattern}: the bytes both processes fill their buffers with, so reads can be checked.</li>
 * </ul>
 *
 * <p><b>Measuring</b>:
 * <ul>
 * <li>{@code Measurement}: one op at one size on {@code --inflight} threads, warmup first.</li>
 * <li>{@code Stats}: rates, percentiles and moments from a histogram (public).</li>
 * <li>{@code Progress}: the progress line on stderr.</li>
 * </ul>
 *
 * <p><b>Output</b>:
 * <ul>
 * <li>{@code PerfResult}: one row of output: an op at one size (public).</li>
 * <li>{@code RunHeader}: what a run's numbers depend on: versions, hosts, transport, settings, options.</li>
 * <li>{@code Report}: the table and the JSON (public).</li>
 * <li>{@code SvgPlot}: the SVG plot of bandwidth and latency against size.</li>
 * </ul>
 */
package io.rdma4j.bench.cli;
