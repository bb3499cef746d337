package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryFileTest {

    /** A descriptor taken from the file's parking, mapped and closed again, as a holder does with one handed over. */
    private static MemorySegment mapHandedOver(MemoryFile.Mapped file, long size, Arena peer) throws IOException {
        int fd = file.parked().take();
        try {
            return MemoryFile.map(fd, size, peer);
        } finally {
            Libc.close(fd);
        }
    }

    @Test
    void create_mapsZeroedPages_seenByASecondMappingOfTheSameFile() throws IOException {
        try (Arena owner = Arena.ofShared(); Arena peer = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 3 * 4096 + 1, owner, f -> { });
            MemorySegment other = mapHandedOver(file, 3 * 4096 + 1, peer);

            assertEquals(0, file.segment().address() % 4096);
            assertEquals(-1, file.segment().mismatch(peer.allocate(3 * 4096 + 1)), "zero-filled");
            file.segment().set(JAVA_LONG, 4096, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, other.get(JAVA_LONG, 4096));
        }
    }

    /** No descriptor of this process names the file: it is parked, not in /proc/self/fd. */
    @Test
    void create_leavesNoDescriptorOfTheFileInThisProcess() throws IOException {
        try (Arena owner = Arena.ofShared()) {
            MemoryFile.create("parked-test", 4096, owner, f -> { });

            assertEquals(List.of(), memfdsNamed("parked-test"));
        }
    }

    @Test
    void take_givesANewDescriptorEachTime_theFileStaysParked() throws IOException {
        try (Arena owner = Arena.ofShared(); Arena peer = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 4096, owner, f -> { });
            file.segment().set(JAVA_LONG, 0, 42);

            MemorySegment first = mapHandedOver(file, 4096, peer);
            MemorySegment second = mapHandedOver(file, 4096, peer);

            assertEquals(42, first.get(JAVA_LONG, 0));
            assertEquals(42, second.get(JAVA_LONG, 0));
        }
    }

    @Test
    void arenaClose_closesTheParkedDescriptor_andReportsTheFile() throws IOException {
        AtomicReference<MemoryFile.Mapped> closed = new AtomicReference<>();
        Arena arena = Arena.ofShared();
        MemoryFile.Mapped file = MemoryFile.create("test", 4096, arena, closed::set);

        arena.close();

        assertEquals(file, closed.get());
        var e = assertThrows(IOException.class, () -> file.parked().take());
        assertEquals("parked descriptor closed", e.getMessage());
    }

    private static List<Path> memfdsNamed(String name) throws IOException {
        try (var fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                try {
                    return Files.readSymbolicLink(fd).toString().startsWith("/memfd:" + name);
                } catch (IOException e) {
                    return false;       // closed since listed
                }
            }).toList();
        }
    }

    @Test
    void map_fileShorterThanAsked_throwsNamingSizes() throws IOException {
        try (Arena owner = Arena.ofShared(); Arena peer = Arena.ofShared()) {
            MemoryFile.Mapped file = MemoryFile.create("test", 4096, owner, f -> { });

            var e = assertThrows(IOException.class, () -> mapHandedOver(file, 8192, peer));

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
            MemoryFile.Mapped file = MemoryFile.create("test", 8192, owner, f -> { });
            int fd = file.parked().take();
            try (FileChannel peer = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                assertThrows(IOException.class, () -> peer.truncate(0));
                assertThrows(IOException.class, () -> peer.write(java.nio.ByteBuffer.allocate(1), 8192));
                assertEquals(8192, peer.size());
            } finally {
                Libc.close(fd);
            }
            file.segment().set(JAVA_LONG, 8192 - 8, 7);        // the owner's pages are all still there
        }
    }
}
