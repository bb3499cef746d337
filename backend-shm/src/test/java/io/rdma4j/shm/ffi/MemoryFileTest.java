package io.rdma4j.shm.ffi;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryFileTest {

    @Test
    void create_mapsZeroedPages_seenByASecondMappingOfTheSameFile() throws IOException {
        try (Arena owner = Arena.ofShared(); Arena peer = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 3 * 4096 + 1, owner, fd -> { });
            MemorySegment other = MemoryFile.map(Path.of("/proc/self/fd/" + file.fd()), 3 * 4096 + 1, peer);

            assertEquals(0, file.segment().address() % 4096);
            assertEquals(-1, file.segment().mismatch(peer.allocate(3 * 4096 + 1)), "zero-filled");
            file.segment().set(JAVA_LONG, 4096, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, other.get(JAVA_LONG, 4096));
        }
    }

    @Test
    void arenaClose_closesTheDescriptorOnce_andReportsIt() throws IOException {
        AtomicInteger closed = new AtomicInteger(-1);
        Arena arena = Arena.ofShared();
        MemoryFile.Mapped file = MemoryFile.create("test", 4096, arena, closed::set);
        assertTrue(Files.exists(Path.of("/proc/self/fd/" + file.fd())));

        arena.close();

        assertEquals(file.fd(), closed.get());
        assertFalse(Files.exists(Path.of("/proc/self/fd/" + file.fd())) && isMemfd(file.fd()),
                "the descriptor is closed (or reused by something else)");
    }

    private static boolean isMemfd(int fd) {
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString().startsWith("/memfd:test");
        } catch (IOException e) {
            return false;
        }
    }

    @Test
    void map_fileShorterThanAsked_throwsNamingSizes() throws IOException {
        try (Arena owner = Arena.ofShared(); Arena peer = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 4096, owner, fd -> { });

            var e = assertThrows(IOException.class,
                    () -> MemoryFile.map(Path.of("/proc/self/fd/" + file.fd()), 8192, peer));

            assertTrue(e.getMessage().contains("4096 bytes, expected at least 8192"), e.getMessage());
        }
    }

    @Test
    void pidfd_ofARunningChild_reportsExitOnlyAfterItExits() throws Exception {
        Process child = new ProcessBuilder("cat").start();      // runs until its input closes
        int pidfd = Libc.pidfdOpen(child.pid());
        assertTrue(pidfd >= 0, Errno.describe(-pidfd));
        try (ProcessVmCopier copier = new ProcessVmCopier()) {
            assertFalse(copier.hasExited(pidfd));

            child.getOutputStream().close();
            child.waitFor();

            assertTrue(copier.hasExited(pidfd));
        } finally {
            assertEquals(0, Libc.close(pidfd));
        }
    }

    @Test
    void pidfdOpen_processThatIsGone_returnsMinusEsrch() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();

        assertEquals(-Errno.ESRCH, Libc.pidfdOpen(p.pid()));
    }

    @Test
    void memfdCreate_negativeSize_throwsNamingTheCall() {
        var e = assertThrows(IOException.class, () -> Libc.memfdCreate("test", -1));

        assertTrue(e.getMessage().startsWith("ftruncate(memfd test, -1) failed: errno 22"), e.getMessage());
    }

    /**
     * A peer that opened the file (as a holder does) can neither shrink it, which would make the
     * owner's next touch of its own buffer a SIGBUS, nor grow it.
     */
    @Test
    void create_sealsTheSize_aPeerCannotShrinkOrGrowIt() throws IOException {
        try (Arena owner = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 8192, owner, fd -> { });

            try (FileChannel peer = FileChannel.open(Path.of("/proc/self/fd/" + file.fd()), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                assertThrows(IOException.class, () -> peer.truncate(0));
                assertThrows(IOException.class, () -> peer.write(java.nio.ByteBuffer.allocate(1), 8192));
                assertEquals(8192, peer.size());
            }
            file.segment().set(JAVA_LONG, 8192 - 8, 7);        // the owner's pages are all still there
        }
    }
}
