package io.rdma4j.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A peer process for cross-process tests: a {@code main} class run in a JVM of its own (this JVM's
 * {@code java} and class path, C1 only, serial GC), driven by one line per command on its stdin and
 * answering one line per command on its stdout. Its stderr (the peer's log) goes to a file under
 * {@code target/peer-logs/} and is quoted in every failure.
 *
 * <p>The peer's first stdout line is its greeting ({@link #greeting()}), e.g. a token; a peer that
 * exits or stays silent for {@code answerWithin} instead fails the start with its log.
 *
 * <p>A peer whose class path starts with this JVM's also gets the JVM flags of the system property
 * {@value #PEER_FLAGS_PROPERTY} (separated by spaces; none when unset): {@code bin/vm-tests} sets it,
 * in the soft-RoCE VM, to map the class-data archive made from this class path.
 */
public final class PeerJvm implements AutoCloseable {

    /** The system property whose flags peers on this JVM's class path get (see the class comment). */
    public static final String PEER_FLAGS_PROPERTY = "rdma4j.test.peerJvmFlags";

    private static final String END = "\u0000end";

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final Path log;
    private final Duration answerWithin;
    private final String greeting;

    private PeerJvm(Process process, Path log, Duration answerWithin) throws InterruptedException {
        this.process = process;
        this.log = log;
        this.answerWithin = answerWithin;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread.ofVirtual().name("peer-stdout-" + process.pid()).start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String l; (l = r.readLine()) != null; ) {
                    lines.add(l);
                }
            } catch (IOException gone) {
                // the process exited
            }
            lines.add(END);
        });
        this.greeting = nextLine(answerWithin);
    }

    /**
     * Starts {@code mainClass} with {@code args} and waits for its greeting line.
     *
     * @param jvmFlags     extra JVM flags (e.g. {@code --enable-native-access=ALL-UNNAMED})
     * @param answerWithin how long the greeting and each later answer may take
     * @throws AssertionError when the peer exits or stays silent before greeting (the process is killed)
     */
    public static PeerJvm start(Class<?> mainClass, List<String> jvmFlags, Duration answerWithin, String... args)
            throws IOException, InterruptedException {
        return start(List.of(), mainClass, jvmFlags, answerWithin, args);
    }

    /**
     * Starts {@code mainClass} with {@code args} behind a command prefix (e.g. {@code ip netns exec
     * NAME}, empty for none) and waits for its greeting line.
     *
     * @see #start(Class, List, Duration, String...)
     */
    public static PeerJvm start(List<String> prefix, Class<?> mainClass, List<String> jvmFlags, Duration answerWithin,
                                String... args) throws IOException, InterruptedException {
        return start(prefix, System.getProperty("java.class.path"), mainClass, jvmFlags, answerWithin, args);
    }

    /**
     * Starts {@code mainClass} on {@code classPath} (instead of this JVM's) behind a command prefix and
     * waits for its greeting line; e.g. a peer running as another user, who cannot read this one's files.
     *
     * @see #start(Class, List, Duration, String...)
     */
    public static PeerJvm start(List<String> prefix, String classPath, Class<?> mainClass, List<String> jvmFlags,
                                Duration answerWithin, String... args) throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
        String flags = System.getProperty(PEER_FLAGS_PROPERTY, "").strip();
        if (!flags.isEmpty() && classPath.startsWith(System.getProperty("java.class.path"))) {
            command.addAll(List.of(flags.split(" +")));
        }
        command.addAll(jvmFlags);
        command.addAll(List.of("-cp", classPath, mainClass.getName()));
        command.addAll(List.of(args));
        Path dir = Files.createDirectories(Path.of("target", "peer-logs"));
        Path log = Files.createTempFile(dir, mainClass.getSimpleName() + "-", ".log");
        Process p = new ProcessBuilder(command).redirectError(log.toFile()).start();
        try {
            return new PeerJvm(p, log, answerWithin);
        } catch (RuntimeException | Error | InterruptedException e) {
            p.destroyForcibly();
            throw e;
        }
    }

    /** The peer's first stdout line. */
    public String greeting() {
        return greeting;
    }

    /** The peer's process, e.g. to kill it. */
    public Process process() {
        return process;
    }

    /**
     * Sends one command line and returns the answer line.
     *
     * @throws AssertionError when the peer exits or gives no answer within the start's bound
     */
    public String command(String line) throws IOException, InterruptedException {
        return command(line, answerWithin);
    }

    /**
     * Sends one command line and returns the answer line, which may take up to {@code wait}.
     *
     * @throws AssertionError when the peer exits or gives no answer within {@code wait}
     */
    public String command(String line, Duration wait) throws IOException, InterruptedException {
        stdin.write(line + "\n");
        stdin.flush();
        return nextLine(wait);
    }

    private String nextLine(Duration wait) throws InterruptedException {
        String l = lines.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
        if (l == null) {
            throw new AssertionError("peer " + process.pid() + " gave no answer within " + wait + "\n" + logText());
        }
        if (l.equals(END)) {
            throw new AssertionError("peer " + process.pid() + " exited\n" + logText());
        }
        return l;
    }

    /** The peer's log so far. */
    public String logText() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** Sends {@code exit} and waits for the peer to end; kills it if it does not within the answer bound. Idempotent. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            try {
                stdin.write("exit\n");
                stdin.flush();
            } catch (IOException gone) {
                // already exiting
            }
            if (!process.waitFor(answerWithin.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
            }
        }
        process.waitFor();
    }
}
