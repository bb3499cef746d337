package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The README's usage example, verbatim between the markers (lines ending in {@code // (test)} are
 * this test's own checks and are not in the README), so that it keeps compiling and working, and
 * a check that the README shows exactly this code.
 */
class ReadmeExampleTest {

    private static final String TEST_ONLY = "// (test)";

    @Test
    void readmeExample_registersWritesReadsBatchesAndReleasesOverTcp() {
        long[] seen = new long[6];
        // --- README example begins
        try (RdmaManager owner = RdmaManager.newBuilder().build();        // usually RdmaManager.shared()
             RdmaManager peer = RdmaManager.newBuilder().build();         // ... in another process
             Arena arena = Arena.ofShared()) {
            RdmaBuffer buffer = owner.allocate(1 << 20).join();          // memory the manager owns, registered
            MemorySegment mine = arena.allocate(4096);
            RdmaRemoteBuffer header = owner.register(mine).join();       // or memory you own (keep its arena open)

            byte[] token = buffer.remote().toBytes();                     // send it anywhere ...
            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(token);  // ... and decode it there

            MemorySegment local = arena.allocate(remote.size()).fill((byte) 7);
            peer.write(remote, local, Duration.ofSeconds(5)).join();      // buffer.segment() now holds 7s
            seen[0] = buffer.segment().get(ValueLayout.JAVA_BYTE, (1 << 20) - 1); // (test)
            peer.read(remote, local, Duration.ofSeconds(5)).join();       // and back

            MemorySegment stamp = arena.allocate(header.size()).fill((byte) 1);
            MemorySegment copy = arena.allocate(remote.size());
            peer.newAction()                                              // a batch: one deadline for every op
                .writeFrom(header, stamp)
                .readInto(remote, copy)
                .submit(Duration.ofSeconds(5))                            // a future; submitAndWait runs it here
                .join();                                                  // failures: RdmaSubmitException, per transport
            seen[1] = mine.get(ValueLayout.JAVA_BYTE, 4095);              // (test)
            seen[2] = copy.get(ValueLayout.JAVA_BYTE, 0);                 // (test)
            seen[3] = copy.get(ValueLayout.JAVA_BYTE, (1 << 20) - 1);     // (test)

            peer.release(remote).join();                                  // a holder's release reaches the owner
            seen[4] = owner.registeredBufferCount();                      // (test)
            owner.release(header).join();                                 // release before closing `arena`
            seen[5] = owner.registeredBufferCount();                      // (test)
        }                                                                 // close(): releases the rest, stops threads
        // --- README example ends

        assertEquals(7, seen[0], "the write reached the owner's buffer");
        assertEquals(1, seen[1], "the batch's write reached the registered segment");
        assertEquals(7, seen[2], "the batch's read copied the buffer's first byte");
        assertEquals(7, seen[3], "the batch's read copied the buffer's last byte");
        assertEquals(1, seen[4], "the peer's release reached the owner; the registered segment stays");
        assertEquals(0, seen[5], "the owner released its segment");
    }

    @Test
    void readmeShowsThisTestsExample_verbatim() throws IOException {
        List<String> inTest = example(Files.readAllLines(Path.of("src/test/java/io/rdma4j/transport/tcp/ReadmeExampleTest.java")),
                "// --- README example begins", "// --- README example ends");
        inTest.removeIf(line -> line.endsWith(TEST_ONLY));
        List<String> inReadme = example(Files.readAllLines(Path.of("..", "README.md")), "```java", "```");

        assertFalse(inTest.isEmpty(), "no example found between the markers in this test");
        assertEquals(String.join("\n", inTest), String.join("\n", inReadme),
                "README.md's usage example (its first ```java block) and this test's example differ: change both");
    }

    /** The lines strictly between the first line whose trimmed text is {@code begin} and the next that is {@code end}, unindented. */
    private static List<String> example(List<String> lines, String begin, String end) {
        List<String> block = new ArrayList<>();
        boolean inside = false;
        for (String line : lines) {
            String trimmed = line.strip();
            if (!inside && trimmed.equals(begin)) {
                inside = true;
            } else if (inside && trimmed.equals(end)) {
                break;
            } else if (inside) {
                block.add(line.stripTrailing());
            }
        }
        int indent = block.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        block.replaceAll(l -> l.isBlank() ? "" : l.substring(indent));
        return block;
    }
}
