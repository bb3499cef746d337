package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.testing.PeerJvm;

import java.io.IOException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

/**
 * A {@link TcpPeerMain} in its own JVM ({@link PeerJvm}), optionally behind a command prefix
 * ({@code ip netns exec <ns>}); its greeting carries the token of the buffer it owns.
 */
final class PeerProcess implements AutoCloseable {

    private final PeerJvm jvm;
    private final RdmaRemoteBuffer token;

    private PeerProcess(PeerJvm jvm) {
        this.jvm = jvm;
        String first = jvm.greeting();
        if (!first.startsWith("TOKEN ")) {
            throw new IllegalStateException("peer did not start: " + first + "\n" + jvm.logText());
        }
        token = RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(first.substring(6)));
    }

    /** Starts a peer with {@code args} (see {@link TcpPeerMain}) behind {@code prefix}. */
    static PeerProcess start(List<String> prefix, String... args) throws IOException, InterruptedException {
        PeerJvm jvm = PeerJvm.start(prefix, TcpPeerMain.class, List.of(), TcpTesting.SAFETY, args);
        try {
            return new PeerProcess(jvm);
        } catch (RuntimeException e) {
            jvm.process().destroyForcibly();
            throw e;
        }
    }

    RdmaRemoteBuffer token() {
        return token;
    }

    long pid() {
        return jvm.process().pid();
    }

    Process process() {
        return jvm.process();
    }

    /** Sends one command and returns its answer line. */
    String command(String line) throws IOException, InterruptedException {
        return jvm.command(line);
    }

    /** Sends one command and returns its answer line, which may take up to {@code wait}. */
    String command(String line, Duration wait) throws IOException, InterruptedException {
        return jvm.command(line, wait);
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
