package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Errno;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcessVmCopierTest {

    private static final long SELF = ProcessHandle.current().pid();

    private Arena arena;
    private ProcessVmCopier copier;

    @BeforeEach
    void open() {
        arena = Arena.ofConfined();
        copier = new ProcessVmCopier();
    }

    @AfterEach
    void close() {
        copier.close();
        arena.close();
    }

    private MemorySegment pattern(long size, int seed) {
        MemorySegment s = arena.allocate(size, 4096);
        for (long i = 0; i < size; i++) {
            s.set(JAVA_BYTE, i, (byte) (i * 31 + seed));
        }
        return s;
    }

    @Nested
    class WithinThisProcess {

        @Test
        void read_oneMiBPlusOne_copiesEveryByte() {
            MemorySegment source = pattern((1 << 20) + 1, 7);
            MemorySegment target = arena.allocate(source.byteSize());

            int errno = copier.read(SELF, target, 0, source.address(), source.byteSize());

            assertEquals(0, errno);
            assertEquals(-1, source.mismatch(target));
        }

        @Test
        void write_toAnOffset_fillsOnlyThatRange() {
            MemorySegment source = pattern(4096, 3);
            MemorySegment target = arena.allocate(3 * 4096L).fill((byte) 0);

            int errno = copier.write(SELF, source, 0, target.address() + 4096, 4096);

            assertEquals(0, errno);
            assertEquals(-1, source.mismatch(target.asSlice(4096, 4096)));
            assertEquals(-1, target.asSlice(0, 4096).mismatch(arena.allocate(4096)));
            assertEquals(-1, target.asSlice(8192, 4096).mismatch(arena.allocate(4096)));
        }

        @Test
        void read_unmappedRemoteAddress_returnsEfault() {
            MemorySegment target = arena.allocate(8);

            int errno = copier.read(SELF, target, 0, 8, 8);     // page 0 is never mapped

            assertEquals(Errno.EFAULT, errno);
        }

        @Test
        void read_zeroBytes_doesNothing() {
            assertEquals(0, copier.read(SELF, arena.allocate(1), 0, 8, 0));
        }

        @Test
        void read_rangeBeyondLocalSegment_throwsIndexOutOfBounds() {
            MemorySegment target = arena.allocate(8);

            assertThrows(IndexOutOfBoundsException.class, () -> copier.read(SELF, target, 4, 8, 8));
        }

        @Test
        void read_heapSegment_throwsIllegalArgument() {
            MemorySegment heap = MemorySegment.ofArray(new byte[8]);

            assertThrows(IllegalArgumentException.class, () -> copier.read(SELF, heap, 0, 8, 8));
        }

        @Test
        void read_afterClose_throwsIllegalState() {
            MemorySegment target = arena.allocate(8);
            copier.close();
            copier.close();     // idempotent

            assertThrows(IllegalStateException.class, () -> copier.read(SELF, target, 0, target.address(), 8));
        }
    }

    @Test
    void read_processThatDoesNotExist_returnsEsrch() throws Exception {
        Process p = new ProcessBuilder("true").start();
        long pid = p.pid();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));

        int errno = copier.read(pid, arena.allocate(8), 0, 4096, 8);

        assertEquals(Errno.ESRCH, errno);
    }

    @Test
    void readAndWrite_anotherJvm_moveItsBytes() throws Exception {
        long size = 64 * 1024 + 1;
        Process peer = PeerMemory.start(size);
        try (BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8))) {
            String[] line = out.readLine().split(" ");      // "<address> <size>", pattern seed 5
            long address = Long.parseLong(line[0]);
            MemorySegment expected = pattern(size, PeerMemory.SEED);
            MemorySegment target = arena.allocate(size);

            assertEquals(0, copier.read(peer.pid(), target, 0, address, size));
            assertEquals(-1, expected.mismatch(target));

            MemorySegment other = pattern(size, 99);
            assertEquals(0, copier.write(peer.pid(), other, 0, address, size));
            assertEquals(0, copier.read(peer.pid(), target, 0, address, size));
            assertEquals(-1, other.mismatch(target));
        } finally {
            peer.getOutputStream().close();     // the peer exits on end of input
            assertTrue(peer.waitFor(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void probe_onThisMachine_reportsCrossMemoryAttachUsable() {
        assertEquals("", Libc.probe());
    }

    /** A second JVM holding {@code size} patterned bytes; prints "address size", exits on end of input. */
    static final class PeerMemory {
        static final int SEED = 5;

        static Process start(long size) throws Exception {
            Path java = Path.of(System.getProperty("java.home"), "bin", "java");
            return new ProcessBuilder(List.of(java.toString(), "--enable-native-access=ALL-UNNAMED", "-cp",
                    System.getProperty("java.class.path"), PeerMemory.class.getName(), Long.toString(size)))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        }

        public static void main(String[] args) throws Exception {
            long size = Long.parseLong(args[0]);
            try (Arena arena = Arena.ofShared()) {
                MemorySegment s = arena.allocate(size, 4096);
                for (long i = 0; i < size; i++) {
                    s.set(JAVA_BYTE, i, (byte) (i * 31 + SEED));
                }
                System.out.println(s.address() + " " + size);
                System.out.flush();
                while (System.in.read() >= 0) {
                    // hold the memory until the test closes our input
                }
            }
        }
    }
}
