package io.rdma4j.transport.shm.ffi;

import io.rdma4j.testing.PeerJvm;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The liveness word: what another process reads, without a system call, to know that the holder
 * of the lock has not exited. The processes here share a plain file's pages (MAP_SHARED).
 */
class LivenessLockTest {

    @TempDir
    Path dir;

    private static MemorySegment map(Path file, Arena arena) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, LivenessLock.SIZE, arena);
        }
    }

    @Test
    void saysAlive_whileHeld_andNoLongerOnceClosed() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment word = map(dir.resolve("w"), arena);
            assertFalse(LivenessLock.saysAlive(word), "a zeroed word says nothing");

            LivenessLock lock = LivenessLock.hold(word, "liveness-test");
            assertTrue(lock.held(), "this platform's C library holds a robust lock");
            assertTrue(LivenessLock.saysAlive(word));

            lock.close();
            lock.close();                                           // idempotent
            assertFalse(LivenessLock.saysAlive(word));
        }
    }

    /** The point of it: the kernel marks the word when the process dies, with nobody's help. */
    @Test
    void aKilledProcesssWord_saysNotAlive_onceItExited() throws Exception {
        Path file = dir.resolve("w");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment word = map(file, arena);
            PeerJvm peer = PeerJvm.start(LivenessHolderMain.class, List.of("--enable-native-access=ALL-UNNAMED"),
                    Duration.ofSeconds(120), file.toString());
            try {
                assertEquals("HELD", peer.greeting());
                assertTrue(LivenessLock.saysAlive(word), "the other process holds it");

                peer.process().destroyForcibly();                  // SIGKILL: no Java code runs
                assertTrue(peer.process().waitFor(60, TimeUnit.SECONDS));

                assertFalse(LivenessLock.saysAlive(word), "the kernel marked the holder's death");
            } finally {
                peer.close();
            }
        }
    }
}
