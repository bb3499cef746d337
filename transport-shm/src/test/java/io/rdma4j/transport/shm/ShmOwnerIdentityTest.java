package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.ProcessVmCopier;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A holder's copies go to the owner process itself, not to whatever process its pid names later.
 * The owner here is a real process that has exited and been reaped, known by its pidfd; its pid
 * is played by this live JVM, as a process that took the pid would: memory that a copy by pid
 * alone would read or write.
 */
class ShmOwnerIdentityTest {

    private static final long SELF = ProcessHandle.current().pid();
    private static final int SIZE = 3 * 4096;

    private final Arena arena = Arena.ofShared();
    private AccessTable ownerTable;
    private ShmPeer deadOwner;
    private ShmPeer liveOwner;
    private AccessTable.Slot slot;
    private final ProcessVmCopier copier = new ProcessVmCopier();

    @BeforeEach
    void open() throws IOException, InterruptedException {
        ownerTable = AccessTable.create();
        slot = ownerTable.assign().orElseThrow();
        deadOwner = Tables.peerWithTable("dead", SELF, pidfdOfAReapedProcess(), ownerTable, slot);
        liveOwner = Tables.peerWithTable("live", SELF, Libc.pidfdOpen(SELF), ownerTable, slot);
    }

    @AfterEach
    void close() {
        deadOwner.close();
        liveOwner.close();
        ownerTable.close();
        copier.close();
        arena.close();
    }

    /** A pidfd of a process that exited and was reaped: its pid is free for the kernel to give again. */
    private static int pidfdOfAReapedProcess() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("cat").start();     // waits for its input: alive until told
        int pidfd = Libc.pidfdOpen(p.pid());
        assertTrue(pidfd >= 0, "pidfd_open: " + pidfd);
        p.getOutputStream().close();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return pidfd;
    }

    private ShmCopy copy(TransportOp.OpType type, MemorySegment local, MemorySegment remote, ShmPeer owner) {
        RemoteBufferRef ref = new RemoteBufferRef(new Endpoint("127.0.0.1", 1), "00".repeat(16), 7, SIZE,
                new byte[16], new byte[0]);
        TransportOp op = TransportOp.of(type, local, ref);
        ShmProtocol.Grant grant = new ShmProtocol.Grant(SELF, slot, remote.address(), SIZE, false);
        return new ShmCopy(op, null, grant, owner, Deadline.after(Duration.ofSeconds(60)), Cancellation.NONE, 4096);
    }

    @Test
    void write_afterTheOwnerDied_touchesNothingWhereItsPidPoints() {
        MemorySegment other = Patterns.fill(arena.allocate(SIZE, 4096), 1);     // the new process's memory
        MemorySegment local = Patterns.fill(arena.allocate(SIZE, 4096), 2);
        ShmCopy write = copy(TransportOp.OpType.WRITE_FROM_LOCAL, local, other, deadOwner);

        TransportException e = assertThrows(TransportException.class, () -> write.range(0, SIZE, copier));

        assertEquals(TransportException.Kind.PEER_UNREACHABLE, e.kind());
        assertTrue(e.getMessage().contains("the owner process has exited"), e.getMessage());
        assertEquals(-1, Patterns.mismatch(other, 1), "not one byte was written");
    }

    @Test
    void read_afterTheOwnerDied_fails_andReadsNothing() {
        MemorySegment other = Patterns.fill(arena.allocate(SIZE, 4096), 1);
        MemorySegment local = arena.allocate(SIZE, 4096);
        ShmCopy read = copy(TransportOp.OpType.READ_INTO_LOCAL, local, other, deadOwner);

        TransportException e = assertThrows(TransportException.class, () -> read.range(0, SIZE, copier));

        assertEquals(TransportException.Kind.PEER_UNREACHABLE, e.kind());
        assertEquals(-1, local.mismatch(MemorySegment.ofArray(new byte[SIZE])), "nothing was read");
    }

    @Test
    void copies_toALiveOwner_moveEveryPiece() {
        MemorySegment remote = Patterns.fill(arena.allocate(SIZE, 4096), 3);
        MemorySegment local = arena.allocate(SIZE, 4096);

        copy(TransportOp.OpType.READ_INTO_LOCAL, local, remote, liveOwner).range(0, SIZE, copier);

        assertEquals(-1, Patterns.mismatch(local, 3));
        assertFalse(copier.hasExited(liveOwner.pidfd()));
    }
}
