package io.rdma4j.bench.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The server of a loopback run: {@code rdma-perf serve --port 0 --once} in a second JVM (same
 * {@code java}, same class path, same {@code rdma.*} system properties), which prints its endpoint
 * and exits when the client disconnects or closes its stdin, whichever comes first.
 */
final class LoopbackServer implements AutoCloseable {

    private static final long START_SECONDS = 120;
    private static final int LOG_LINES = 40;

    private final Process process;
    private final RunOptions.Peer endpoint;
    private final Deque<String> log;
    private final Thread killer;

    private LoopbackServer(Process process, RunOptions.Peer endpoint, Deque<String> log, Thread killer) {
        this.process = process;
        this.endpoint = endpoint;
        this.log = log;
        this.killer = killer;
    }

    RunOptions.Peer endpoint() {
        return endpoint;
    }

    /**
     * Starts the server process and waits until it listens.
     *
     * @param echo where the server's stderr is copied to (with {@code --verbose}), or {@code null}
     * @throws IllegalStateException with the server's last output when it exits or fails to listen in time
     */
    static LoopbackServer start(CommonOptions common, PrintStream echo) throws IOException {
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
        command.add("--port=0");
        command.add("--once");
        command.add("--exit-on-stdin-eof");
        command.addAll(common.toArgs());
        Process process = new ProcessBuilder(command).start();
        Thread killer = new Thread(process::destroy, "rdma-perf-server-killer");
        Runtime.getRuntime().addShutdownHook(killer);
        Deque<String> log = new ArrayDeque<>();
        Thread.ofPlatform().daemon().name("rdma-perf-server-stderr").start(() -> drain(process.getErrorStream(), log, echo,
                null));
        CompletableFuture<RunOptions.Peer> listening = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("rdma-perf-server-stdout").start(() -> drain(process.getInputStream(), log, null,
                listening));
        LoopbackServer server = new LoopbackServer(process, null, log, killer);
        try {
            return new LoopbackServer(process, listening.get(START_SECONDS, TimeUnit.SECONDS), log, killer);
        } catch (ExecutionException | TimeoutException | InterruptedException e) {
            server.close();
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            String tail = server.log();
            String why = e instanceof TimeoutException ? "it did not listen within " + START_SECONDS + " s"
                    : RdmaPerf.describe(e);
            throw new IllegalStateException("the server process failed to start: " + why
                    + (tail.isEmpty() ? "" : "\n" + tail.stripTrailing()), e);
        }
    }

    private static void drain(InputStream stream, Deque<String> log, PrintStream echo,
                              CompletableFuture<RunOptions.Peer> listening) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (listening != null && !listening.isDone() && line.startsWith(PerfServer.LISTENING)) {
                    String endpoint = line.substring(PerfServer.LISTENING.length()).split(" ", 2)[0];
                    listening.complete(new RunOptions.PeerConverter().convert(endpoint));
                }
                if (echo != null) {
                    echo.println("[server] " + line);
                }
                synchronized (log) {
                    if (log.size() == LOG_LINES) {
                        log.removeFirst();
                    }
                    log.addLast(line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the process is gone; the exit below says so
        }
        if (listening != null) {
            listening.completeExceptionally(new IllegalStateException("it exited before it listened"));
        }
    }

    /** The server's last lines of output, one per line. */
    String log() {
        synchronized (log) {
            return log.stream().map(l -> l + "\n").collect(Collectors.joining());
        }
    }

    /** Closes the server's stdin, which makes it close its manager and exit; kills it if it lingers. */
    @Override
    public void close() {
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
        try {
            Runtime.getRuntime().removeShutdownHook(killer);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs anyway
        }
    }
}
