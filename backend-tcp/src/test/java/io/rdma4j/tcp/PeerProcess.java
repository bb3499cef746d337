package io.rdma4j.tcp;

import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TcpPeerMain} in its own JVM: the same {@code java} and class path as this test JVM,
 * optionally behind a command prefix ({@code ip netns exec <ns>}). Its stderr goes to a log file
 * under {@code target/}.
 */
final class PeerProcess implements AutoCloseable {

    private static final String END = "\u0000end";

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;
    private final RdmaRemoteBuffer token;

    private PeerProcess(Process process, Path log) throws IOException, InterruptedException {
        this.process = process;
        this.log = log;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofVirtual().name("peer-stdout-" + process.pid()).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    lines.add(l);
                }
            } catch (IOException ignored) {
                // process gone
            }
            lines.add(END);
        });
        String first = nextLine();
        if (!first.startsWith("TOKEN ")) {
            throw new IllegalStateException("peer did not start: " + first + "\n" + logText());
        }
        token = RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(first.substring(6)));
    }

    /** Starts a peer with {@code args} (see {@link TcpPeerMain}) behind {@code prefix}. */
    static PeerProcess start(List<String> prefix, String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse(
                Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), TcpPeerMain.class.getName()));
        command.addAll(List.of(args));
        Path dir = Files.createDirectories(Path.of("target", "peer-logs"));
        Path log = Files.createTempFile(dir, "peer-", ".log");
        Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
        try {
            return new PeerProcess(p, log);
        } catch (IOException | RuntimeException | InterruptedException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    RdmaRemoteBuffer token() {
        return token;
    }

    long pid() {
        return process.pid();
    }

    Process process() {
        return process;
    }

    /** Sends one command and returns its answer line. */
    String command(String line) throws IOException, InterruptedException {
        return command(line, TcpTesting.SAFETY);
    }

    /** Sends one command and returns its answer line, which may take up to {@code wait}. */
    String command(String line, java.time.Duration wait) throws IOException, InterruptedException {
        stdin.write(line + "\n");
        stdin.flush();
        return nextLine(wait);
    }

    private String nextLine() throws InterruptedException {
        return nextLine(TcpTesting.SAFETY);
    }

    private String nextLine(java.time.Duration wait) throws InterruptedException {
        String l = lines.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (l == null) {
            throw new AssertionError("peer " + process.pid() + " gave no answer within " + wait + "\n" + logText());
        }
        if (l.equals(END)) {
            throw new AssertionError("peer " + process.pid() + " exited\n" + logText());
        }
        return l;
    }

    String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Asks the peer to exit; kills it if it does not within the safety bound. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            try {
                stdin.write("exit\n");
                stdin.flush();
            } catch (IOException gone) {
                // already exiting
            }
            if (!process.waitFor(TcpTesting.SAFETY.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        process.waitFor();
    }
}
