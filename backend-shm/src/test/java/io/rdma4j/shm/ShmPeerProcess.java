package io.rdma4j.shm;

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

/** A {@link ShmPeerMain} in its own JVM (same java, same class path); stderr goes to target/peer-logs. */
final class ShmPeerProcess implements AutoCloseable {

    private static final String END = "\u0000end";
    private static final long SAFETY_SECONDS = 60;

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;
    private final RdmaRemoteBuffer token;

    private ShmPeerProcess(Process process, Path log) throws InterruptedException {
        this.process = process;
        this.log = log;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofVirtual().name("shm-peer-stdout-" + process.pid()).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException gone) {
                // the process exited
            }
            lines.add(END);
        });
        String first = nextLine();
        if (!first.startsWith("TOKEN ")) {
            throw new IllegalStateException("peer did not start: " + first + "\n" + logText());
        }
        token = RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(first.substring(6)));
    }

    static ShmPeerProcess start(String... args) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
                ShmPeerMain.class.getName()));
        command.addAll(List.of(args));
        Path dir = Files.createDirectories(Path.of("target", "peer-logs"));
        Path log = Files.createTempFile(dir, "shm-peer-", ".log");
        Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
        try {
            return new ShmPeerProcess(p, log);
        } catch (RuntimeException | InterruptedException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    RdmaRemoteBuffer token() {
        return token;
    }

    Process process() {
        return process;
    }

    /** Sends one command and returns its answer line. */
    String command(String line) throws IOException, InterruptedException {
        stdin.write(line + "\n");
        stdin.flush();
        return nextLine();
    }

    private String nextLine() throws InterruptedException {
        String l = lines.poll(SAFETY_SECONDS, TimeUnit.SECONDS);
        if (l == null) {
            throw new AssertionError("peer " + process.pid() + " gave no answer within " + SAFETY_SECONDS + " s\n" + logText());
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
            if (!process.waitFor(SAFETY_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        process.waitFor();
    }
}
