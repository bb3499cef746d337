package io.rdma4j.transport.shm;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.testing.PeerJvm;

import java.io.IOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/** A {@link ShmPeerMain} in its own JVM ({@link PeerJvm}); its greeting carries the token of the buffer it owns. */
final class ShmPeerProcess implements AutoCloseable {

    private static final Duration SAFETY = Duration.ofSeconds(60);

    private final PeerJvm jvm;
    private final RdmaRemoteBuffer token;

    private ShmPeerProcess(PeerJvm jvm) {
        this.jvm = jvm;
        String first = jvm.greeting();
        if (!first.startsWith("TOKEN ")) {
            throw new IllegalStateException("peer did not start: " + first + "\n" + jvm.logText());
        }
        token = RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(first.substring(6)));
    }

    static ShmPeerProcess start(String... args) throws IOException, InterruptedException {
        return start(PeerJvm.start(ShmPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"), SAFETY, args));
    }

    /** A peer behind a command prefix, on its own class path (e.g. {@code setpriv} to another user). */
    static ShmPeerProcess startAs(List<String> prefix, String classPath, String... args) throws IOException, InterruptedException {
        return startAs(prefix, classPath, SAFETY, args);
    }

    /** {@link #startAs(List, String, String...)} with its own bound for the greeting and each answer (e.g. under emulation). */
    static ShmPeerProcess startAs(List<String> prefix, String classPath, Duration answerWithin, String... args)
            throws IOException, InterruptedException {
        return start(PeerJvm.start(prefix, classPath, ShmPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"),
                answerWithin, args));
    }

    private static ShmPeerProcess start(PeerJvm jvm) {
        try {
            return new ShmPeerProcess(jvm);
        } catch (RuntimeException e) {
            jvm.process().destroyForcibly();
            throw e;
        }
    }

    RdmaRemoteBuffer token() {
        return token;
    }

    Process process() {
        return jvm.process();
    }

    /** Sends one command and returns its answer line. */
    String command(String line) throws IOException, InterruptedException {
        return jvm.command(line);
    }

    String logText() {
        return jvm.logText();
    }

    /** Asks the peer to exit; kills it if it does not within the safety bound. */
    @Override
    public void close() throws InterruptedException {
        jvm.close();
    }
}
