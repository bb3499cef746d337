package io.rdma4j.bench.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.TransportProvider;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM owning one buffer for {@link ShmTransferBenchmark}: starts a manager running only
 * the named transport, allocates ({@code allocate}) or registers ({@code register}) a buffer,
 * prints its token in hex and serves until its standard input closes.
 */
public final class TransferOwner implements AutoCloseable {

    private final Process process;
    private final RdmaRemoteBuffer token;

    private TransferOwner(Process process, RdmaRemoteBuffer token) {
        this.process = process;
        this.token = token;
    }

    /**
     * Starts the owner JVM with this JVM's class path and reads its token.
     *
     * @param transport the one transport its manager runs
     * @param memory    {@code allocate} or {@code register}
     * @param size      the buffer's length
     * @return the running owner; close it to end the JVM
     * @throws IOException if it cannot start or exits before printing its token
     */
    public static TransferOwner start(String transport, String memory, long size) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(java.toString(), "-Xmx128m", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), TransferOwner.class.getName(), transport, memory,
                Long.toString(size))).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        if (line == null || !line.startsWith("TOKEN ")) {
            p.destroyForcibly();
            throw new IOException("owner JVM did not print its token: " + line);
        }
        return new TransferOwner(p, RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(line.substring(6))));
    }

    /** @return the owner's buffer */
    public RdmaRemoteBuffer token() {
        return token;
    }

    /** Closes the owner's input, so that it exits, and waits for it. */
    @Override
    public void close() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (IOException e) {
            process.destroyForcibly();
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Builds a manager that runs only {@code transport}.
     *
     * @param transport a provider name
     * @return the manager
     * @throws IllegalStateException if no such provider is on the class path or it cannot start
     */
    public static RdmaManager manager(String transport) {
        TransportProvider provider = ServiceLoader.load(TransportProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.name().equals(transport)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no transport named " + transport));
        return RdmaManager.newBuilder().isolated().providers(List.of(provider)).build();
    }

    /**
     * The owner's entry point.
     *
     * @param args transport, {@code allocate|register}, size
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        long size = Long.parseLong(args[2]);
        try (RdmaManager manager = manager(args[0]); Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token;
            if (args[1].equals("allocate")) {
                token = manager.allocate(size).join().remote();
            } else {
                MemorySegment segment = arena.allocate(size, 4096).fill((byte) 0x3c);
                token = manager.register(segment).join();
            }
            System.out.println("TOKEN " + HexFormat.of().formatHex(token.toBytes()));
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the benchmark closes our input
            }
        }
    }
}
