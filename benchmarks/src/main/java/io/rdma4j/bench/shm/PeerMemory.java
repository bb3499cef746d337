package io.rdma4j.bench.shm;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM holding one native segment that the benchmark reads and writes with cross-memory
 * attach. The child prints {@code "<address>"} once its memory is allocated and touched, then
 * does nothing until its standard input closes.
 */
public final class PeerMemory implements AutoCloseable {

    private final Process process;
    private final long address;

    private PeerMemory(Process process, long address) {
        this.process = process;
        this.address = address;
    }

    /**
     * Starts the child JVM with this JVM's class path and waits for its address.
     *
     * @param size bytes the child allocates (page aligned, filled so every page is mapped)
     * @return the running peer; close it to end the child
     * @throws IOException if the child cannot start or exits before printing its address
     */
    public static PeerMemory start(long size) throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(List.of(java.toString(), "-Xmx64m", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), PeerMemory.class.getName(), Long.toString(size)))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)).readLine();
        if (line == null) {
            p.destroyForcibly();
            throw new IOException("peer JVM exited before printing its address");
        }
        return new PeerMemory(p, Long.parseLong(line.trim()));
    }

    /** @return the child's process id */
    public long pid() {
        return process.pid();
    }

    /** @return the address of the child's segment, in the child */
    public long address() {
        return address;
    }

    /** Closes the child's input, so it exits, and waits up to 30 s for it. */
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
     * The child's entry point.
     *
     * @param args one argument: the segment's size in bytes
     * @throws IOException if standard input fails
     */
    public static void main(String[] args) throws IOException {
        long size = Long.parseLong(args[0]);
        try (Arena arena = Arena.ofShared()) {
            MemorySegment segment = arena.allocate(size, 4096).fill((byte) 0x3c);
            System.out.println(segment.address());
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the memory until the parent closes our input
            }
        }
    }
}
