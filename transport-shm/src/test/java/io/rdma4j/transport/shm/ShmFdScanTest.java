package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory is handed over, not found: a process of the same user that knows the owner's pid and
 * reads every regular file it can open under {@code /proc/<owner>/fd} (which Yama does not
 * restrict) finds no byte of an {@code allocate()}d buffer, even after a holder was handed it.
 * Owner: a second JVM; holder: this one; the scanner: a shell loop with {@code grep}.
 */
class ShmFdScanTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int SIZE = 1 << 20;

    /** Every regular file the scanner could open and read under {@code /proc/<pid>/fd}; FOUND for those holding {@code marker}. */
    private static List<String> scan(long pid, String marker) throws IOException, InterruptedException {
        String script = "n=0; for f in /proc/" + pid + "/fd/*; do "
                + "if [ -f \"$f\" ] && [ -r \"$f\" ]; then n=$((n+1)); "
                + "if grep -q -a -F \"$1\" \"$f\" 2>/dev/null; then echo \"FOUND $f $(readlink \"$f\")\"; fi; fi; "
                + "done; echo \"READ $n\"";
        Process p = new ProcessBuilder("sh", "-c", script, "scanner", marker).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return out.lines().toList();
    }

    @Test
    void sameUserProcessReadingEveryFileUnderTheOwnersProcFd_findsNoByteOfAHandedOverBuffer() throws Exception {
        String marker = "rdma4j-marker-" + HexFormat.of().formatHex(
                ThreadLocalRandom.current().ints(16).collect(java.io.ByteArrayOutputStream::new,
                        (b, i) -> b.write(i), (a, b) -> { }).toByteArray());
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + SIZE, "memory=allocate");
             RdmaManager holder = RdmaManager.newBuilder().isolated().providers(ServiceLoader.load(TransportProvider.class)
                     .stream().map(ServiceLoader.Provider::get).filter(p -> p.name().equals("shm")).toList()).build();
             Arena arena = Arena.ofShared()) {
            assertEquals("OK", owner.command("mark " + marker));
            MemorySegment local = arena.allocate(SIZE);
            holder.read(owner.token(), local, TIMEOUT).join();             // handed over and mapped here
            assertEquals(marker, new String(local.asSlice(0, marker.length()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                    StandardCharsets.US_ASCII));

            List<String> lines = scan(owner.process().pid(), marker);

            assertEquals(List.of(), lines.stream().filter(l -> l.startsWith("FOUND")).toList(), "what the scanner found");
            assertTrue(lines.getLast().startsWith("READ ") && !lines.getLast().equals("READ 0"),
                    "the scanner read the owner's open files (its jars at least): " + lines);
        }
    }

    /** The holder does not keep the descriptors it was handed either: it mapped them and closed them. */
    @Test
    void holderThatWasHandedABuffer_keepsNoDescriptorOfIt() throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + SIZE, "memory=allocate");
             RdmaManager holder = RdmaManager.newBuilder().isolated().providers(ServiceLoader.load(TransportProvider.class)
                     .stream().map(ServiceLoader.Provider::get).filter(p -> p.name().equals("shm")).toList()).build();
             Arena arena = Arena.ofShared()) {
            holder.read(owner.token(), arena.allocate(SIZE), TIMEOUT).join();

            assertEquals(List.of(), memfds(Path.of("/proc/self/fd")));
        }
    }

    private static List<String> memfds(Path fds) throws IOException {
        try (var entries = Files.list(fds)) {
            return entries.map(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString();
                } catch (IOException e) {
                    return "";          // closed since listed
                }
            }).filter(link -> link.startsWith("/memfd:rdma4j")).toList();
        }
    }
}
