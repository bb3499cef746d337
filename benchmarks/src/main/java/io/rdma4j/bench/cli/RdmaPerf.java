package io.rdma4j.bench.cli;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * {@code rdma-perf}: bandwidth and latency of RDMA reads and writes between two managers in two
 * processes on this machine, like {@code ib_write_bw}/{@code ib_read_lat} for rdma4j.
 *
 * <p>The client (this process) starts a server JVM with the same {@code java} and class path in
 * the {@code serve} sub-mode. The server allocates one buffer of the largest size, registers a
 * prefix of it per size, prints the tokens and waits until its stdin closes. The client then
 * runs each op and size back to back, one op in flight at a time, and prints one row each.
 *
 * <pre>
 *   client JVM                                   server JVM ("serve")
 *   ──────────                                   ────────────────────
 *   spawn ─────────── args ───────────────────▶  build manager, allocate, register prefixes
 *   read tokens ◀──── stdout: TOKEN size hex ──  READY
 *   write/read loop ◀═══ transport (tcp) ═════▶  (served by its transport threads)
 *   close stdin ───────────────────────────────▶ close manager, exit
 * </pre>
 *
 * <p>Exit codes: 0 success, 1 the measurement failed, 2 a bad command line. Not thread-safe;
 * one run per process.
 */
public final class RdmaPerf {

    private static final System.Logger LOG = System.getLogger(RdmaPerf.class.getName());
    private static final String TOKEN_LINE = "TOKEN ";
    private static final String READY_LINE = "READY";
    private static final long SERVER_START_SECONDS = 120;
    private static final int SERVER_LOG_LINES = 40;

    private RdmaPerf() {
    }

    /** Runs rdma-perf and exits with its exit code. */
    public static void main(String[] args) {
        int code = run(args, System.in, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    /**
     * Runs rdma-perf in this process.
     *
     * @param in  the server sub-mode waits until this stream ends; unused by the client
     * @param out the table (client) or the tokens (server)
     * @param err errors and progress
     * @return the exit code: 0 success, 1 failure, 2 bad command line
     */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        PerfOptions options;
        try {
            options = PerfOptions.parse(args);
        } catch (UsageException e) {
            err.println("rdma-perf: " + e.getMessage());
            return UsageException.EXIT_CODE;
        }
        return switch (options.mode()) {
            case HELP -> {
                out.print(PerfOptions.USAGE);
                out.flush();
                yield 0;
            }
            case SERVE -> serve(options, in, out, err);
            case CLIENT -> client(options, out, err);
        };
    }

    // ------------------------------------------------------------------ server

    private static int serve(PerfOptions options, InputStream in, PrintStream out, PrintStream err) {
        quietLogging(options.verbose());
        try (RdmaManager manager = managerBuilder(options).build()) {
            RdmaBuffer buffer = manager.allocate(options.maxSize()).get(SERVER_START_SECONDS, TimeUnit.SECONDS);
            TestPattern.fill(buffer.segment());
            HexFormat hex = HexFormat.of();
            for (long size : options.sizes()) {
                RdmaRemoteBuffer token = size == buffer.byteSize() ? buffer.remote()
                        : manager.register(buffer.segment().asSlice(0, size)).get(SERVER_START_SECONDS, TimeUnit.SECONDS);
                out.println(TOKEN_LINE + size + " " + hex.formatHex(token.toBytes()));
            }
            out.println(READY_LINE);
            out.flush();
            // Stay until the client closes our stdin (or dies, which closes it too).
            byte[] sink = new byte[256];
            while (in.read(sink) >= 0) {
                // nothing to do
            }
            return 0;
        } catch (Exception e) {
            err.println("rdma-perf serve: " + describe(e));
            LOG.log(System.Logger.Level.DEBUG, "server failed", e);
            return 1;
        }
    }

    // ------------------------------------------------------------------ client

    private static int client(PerfOptions options, PrintStream out, PrintStream err) {
        if (options.json() != null) {
            Path parent = options.json().toAbsolutePath().getParent();
            if (parent != null && !Files.isDirectory(parent)) {
                err.println("rdma-perf: --json: directory " + parent + " does not exist");
                return UsageException.EXIT_CODE;
            }
        }
        quietLogging(options.verbose());
        Server server;
        try {
            server = Server.start(options, err);
        } catch (Exception e) {
            err.println("rdma-perf: the server process failed to start: " + describe(e));
            return 1;
        }
        Thread killer = new Thread(server.process::destroy, "rdma-perf-server-killer");
        Runtime.getRuntime().addShutdownHook(killer);
        try (RdmaManager manager = managerBuilder(options).build();
             Arena arena = Arena.ofShared()) { // transport threads touch these segments
            List<PerfResult> results = measure(options, manager, server.tokens, arena, out, err);
            if (options.json() != null) {
                Files.writeString(options.json(), Report.toJson(results), StandardCharsets.UTF_8);
            }
            return 0;
        } catch (Exception e) {
            err.println("rdma-perf: " + describe(e));
            String log = server.log();
            if (!log.isEmpty()) {
                err.println("rdma-perf: server output:");
                err.print(log);
            }
            LOG.log(System.Logger.Level.DEBUG, "run failed", e);
            return 1;
        } finally {
            server.stop();
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs anyway
            }
        }
    }

    private static List<PerfResult> measure(PerfOptions options, RdmaManager manager, Map<Long, RdmaRemoteBuffer> tokens,
                                            Arena arena, PrintStream out, PrintStream err) throws Exception {
        long max = options.maxSize();
        MemorySegment source = arena.allocate(max, 4096);
        MemorySegment sink = arena.allocate(max, 4096);
        TestPattern.fill(source);

        Progress progress = new Progress(err, Progress.stderrIsTerminal(), options.ops().size() * options.sizes().size());
        List<PerfResult> results = new ArrayList<>();
        out.println(Report.tableHeader());
        out.flush();
        for (String op : options.ops()) {
            boolean write = op.equals("write");
            for (long size : options.sizes()) {
                RdmaRemoteBuffer remote = tokens.get(size);
                String transport = transportFor(manager, remote);
                MemorySegment local = (write ? source : sink).asSlice(0, size);
                RdmaAction action = write ? manager.newAction().writeFrom(remote, local)
                        : manager.newAction().readInto(remote, local);
                int iters = options.itersFor(size);
                int warmup = options.warmupFor(size);
                progress.start(op, size, warmup, iters);
                if (!write) {
                    local.fill((byte) 0);
                }
                for (int i = 0; i < warmup; i++) {
                    await(action, options, op, size);
                }
                long[] latencies = new long[iters];
                long start = System.nanoTime();
                for (int i = 0; i < iters; i++) {
                    long t0 = System.nanoTime();
                    await(action, options, op, size);
                    latencies[i] = System.nanoTime() - t0;
                    progress.measured(i + 1, iters);
                }
                long elapsed = System.nanoTime() - start;
                verify(manager, options, op, remote, source, sink, size);
                PerfResult result = Stats.summarise(op, size, transport, latencies, elapsed);
                results.add(result);
                progress.clear();
                out.println(Report.tableRow(result));
                out.flush();
            }
        }
        return results;
    }

    /** After writes, reads the buffer back; after reads, checks what arrived. Unmeasured. */
    private static void verify(RdmaManager manager, PerfOptions options, String op, RdmaRemoteBuffer remote,
                               MemorySegment source, MemorySegment sink, long size) throws Exception {
        MemorySegment got = sink.asSlice(0, size);
        if (op.equals("write")) {
            got.fill((byte) 0);
            await(manager.newAction().readInto(remote, got), options, "read-back", size);
        }
        long at = MemorySegment.mismatch(got, 0, size, source, 0, size);
        if (at >= 0) {
            throw new IllegalStateException("data check failed after " + op + " of " + Sizes.format(size)
                    + ": byte " + at + " differs from what was written");
        }
    }

    private static void await(RdmaAction action, PerfOptions options, String op, long size) throws Exception {
        try {
            if (options.onCallerThread()) {
                action.submitAndWait(options.timeout());
            } else {
                action.submit(options.timeout()).join();
            }
        } catch (CompletionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IllegalStateException(op + " of " + Sizes.format(size) + " failed: " + describe(cause), cause);
        } catch (RdmaException e) {
            throw new IllegalStateException(op + " of " + Sizes.format(size) + " failed: " + describe(e), e);
        }
    }

    /** The transport {@link RdmaAction#submit} routes to: the first, by priority, that both sides run. */
    static String transportFor(RdmaManager manager, RdmaRemoteBuffer remote) {
        for (String name : manager.backends()) {
            if (remote.hasTransport(name)) {
                return name;
            }
        }
        throw new IllegalStateException("this process runs transports " + manager.backends()
                + " but the server's buffer offers " + remote.transports());
    }

    // ------------------------------------------------------------------ shared

    private static RdmaManager.Builder managerBuilder(PerfOptions options) {
        RdmaManager.Builder builder = RdmaManager.newBuilder();
        if (options.parallelism() > 0) {
            builder.set("rdma.tcp.parallelism", Integer.toString(options.parallelism()));
        }
        if (options.chunkMiB() > 0) {
            builder.set("rdma.tcp.maxChunkMiB", Integer.toString(options.chunkMiB()));
        }
        return builder;
    }

    /** Keeps the managers' INFO chatter off stderr, where the progress line lives. */
    private static void quietLogging(boolean verbose) {
        if (!verbose) {
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        }
    }

    private static String describe(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        String message = t.getMessage();
        if (t instanceof TimeoutException) {
            return "timed out";
        }
        return message == null || message.isBlank() ? t.toString() : message;
    }

    /** The server process and what it printed. */
    private static final class Server {
        private final Process process;
        private final Map<Long, RdmaRemoteBuffer> tokens;
        private final Deque<String> log;

        private Server(Process process, Map<Long, RdmaRemoteBuffer> tokens, Deque<String> log) {
            this.process = process;
            this.tokens = tokens;
            this.log = log;
        }

        static Server start(PerfOptions options, PrintStream err) throws Exception {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("--enable-native-access=ALL-UNNAMED");
            // rdma.* system properties configure both managers alike.
            System.getProperties().stringPropertyNames().stream()
                    .filter(k -> k.startsWith("rdma."))
                    .sorted()
                    .forEach(k -> command.add("-D" + k + "=" + System.getProperty(k)));
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(RdmaPerf.class.getName());
            command.add("serve");
            command.add("--size");
            command.add(options.sizes().stream().map(String::valueOf).collect(Collectors.joining(",")));
            if (options.parallelism() > 0) {
                command.add("--parallelism");
                command.add(Integer.toString(options.parallelism()));
            }
            if (options.chunkMiB() > 0) {
                command.add("--chunk-mib");
                command.add(Integer.toString(options.chunkMiB()));
            }
            if (options.verbose()) {
                command.add("--verbose");
            }
            Process process = new ProcessBuilder(command).start();
            Deque<String> log = new ArrayDeque<>();
            Thread.ofPlatform().daemon().name("rdma-perf-server-stderr").start(() -> drain(process.getErrorStream(), log,
                    options.verbose() ? err : null));

            CompletableFuture<Map<Long, RdmaRemoteBuffer>> ready = new CompletableFuture<>();
            Thread.ofPlatform().daemon().name("rdma-perf-server-stdout").start(() -> readTokens(process, ready));
            Server server = new Server(process, null, log);
            try {
                return new Server(process, ready.get(SERVER_START_SECONDS, TimeUnit.SECONDS), log);
            } catch (ExecutionException | TimeoutException | InterruptedException e) {
                server.stop();
                String tail = server.log();
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                throw new IllegalStateException(describe(cause) + (tail.isEmpty() ? "" : "\n" + tail.stripTrailing()), cause);
            }
        }

        private static void readTokens(Process process, CompletableFuture<Map<Long, RdmaRemoteBuffer>> ready) {
            Map<Long, RdmaRemoteBuffer> tokens = new LinkedHashMap<>();
            HexFormat hex = HexFormat.of();
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    if (line.startsWith(TOKEN_LINE)) {
                        String[] parts = line.split(" ");
                        tokens.put(Long.parseLong(parts[1]), RdmaRemoteBuffer.fromBytes(hex.parseHex(parts[2])));
                    } else if (line.equals(READY_LINE)) {
                        ready.complete(Map.copyOf(tokens));
                    }
                }
                int code = process.waitFor();
                ready.completeExceptionally(new IllegalStateException("it exited with code " + code + " before it was ready"));
            } catch (IOException | RuntimeException e) {
                ready.completeExceptionally(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                ready.completeExceptionally(e);
            }
        }

        private static void drain(InputStream stream, Deque<String> log, PrintStream echo) {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    if (echo != null) {
                        echo.println("[server] " + line);
                    }
                    synchronized (log) {
                        if (log.size() == SERVER_LOG_LINES) {
                            log.removeFirst();
                        }
                        log.addLast(line);
                    }
                }
            } catch (IOException e) {
                // the process is gone
            }
        }

        String log() {
            synchronized (log) {
                return log.stream().map(l -> l + "\n").collect(Collectors.joining());
            }
        }

        /** Closes the server's stdin, which makes it close its manager and exit; kills it if it lingers. */
        void stop() {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                // already gone
            }
            try {
                if (!process.waitFor(15, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
