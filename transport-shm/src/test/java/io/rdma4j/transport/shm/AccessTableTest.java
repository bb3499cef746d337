package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The owner's table and a holder's view of it, both in this process (the holder is pid SELF). */
class AccessTableTest {

    private static final long SELF = ProcessHandle.current().pid();
    /** A wait no test should sit through: a revoke that honours it returns at once or the test is wrong. */
    private static final Duration LONG_WAIT = Duration.ofSeconds(20);

    private AccessTable owner;
    private final List<AccessTable> views = new ArrayList<>();

    @BeforeEach
    void open() throws IOException {
        owner = AccessTable.create();
    }

    @AfterEach
    void close() {
        views.forEach(AccessTable::close);
        owner.close();
        owner.close();                                     // idempotent
    }

    /** This process's view as a holder granted {@code slot} (the owner hands its files over). */
    private AccessTable holder(AccessTable.Slot slot) throws IOException {
        AccessTable view = Tables.handedOver(owner, SELF, slot);
        views.add(view);
        return view;
    }

    @Test
    void ownerAlive_onAHoldersView_whileTheOwnersTableIsOpen_notOnceItClosed() throws IOException {
        AccessTable view = holder(owner.assign().orElseThrow());
        assertTrue(view.ownerAlive(), "the owner holds its liveness lock while its table is open");

        owner.close();

        assertFalse(view.ownerAlive(), "closed: the holder must ask the owner's pidfd");
    }

    @Test
    void readOnlyAssignment_isPublishedInTheSlotsGeneration_soAHolderCopiesItOnlyAsReadOnly() throws IOException {
        AccessTable.Slot readOnly = owner.assign(false, true).orElseThrow();
        AccessTable.Slot writable = owner.assign(true, false).orElseThrow();
        AccessTable view = holder(readOnly);
        AccessTable.Slot claimedWritable = new AccessTable.Slot(readOnly.index(), readOnly.generation() & ~AccessTable.READ_ONLY);

        assertTrue(readOnly.readOnly());
        assertFalse(writable.readOnly());
        assertTrue(writable.watched());
        assertTrue(view.isCurrent(readOnly));
        assertFalse(view.isCurrent(claimedWritable), "the owner's table names the buffer read-only, not what a holder claims");
        assertEquals(AccessTable.RELEASED, view.enter(claimedWritable));
    }

    @Test
    void assign_givesDistinctSlotsAndGenerations() {
        Set<Integer> slots = new HashSet<>();
        Set<Long> generations = new HashSet<>();
        for (int i = 0; i < 100; i++) {
            AccessTable.Slot s = owner.assign().orElseThrow();
            slots.add(s.index());
            generations.add(s.generation());
        }

        assertEquals(100, slots.size());
        assertEquals(100, generations.size());
    }

    @Test
    void assign_afterRevoke_reusesSlotWithNewGeneration() throws IOException {
        AccessTable.Slot first = owner.assign().orElseThrow();
        AccessTable holder = holder(first);
        assertTrue(owner.revoke(first, Duration.ofSeconds(5)).quiet());

        AccessTable.Slot second = owner.assign().orElseThrow();

        assertEquals(first.index(), second.index());
        assertTrue(second.generation() > first.generation());
        assertEquals(AccessTable.RELEASED, holder.enter(first), "the old generation stays refused");
    }

    @Test
    void enter_publishedSlot_claimsRowSeenByTheOwner() throws IOException {
        AccessTable.Slot s = owner.assign().orElseThrow();
        AccessTable holder = holder(s);

        int row = holder.enter(s);

        assertTrue(row >= 0);
        assertTrue(holder.isCurrent(s));
        assertEquals(List.of(SELF), owner.revoke(s, Duration.ofMillis(50)).waitedOut(), "the owner sees the copy in flight");
        holder.exit(row);
    }

    @Test
    void enter_afterRevoke_isRefused() throws IOException {
        AccessTable.Slot s = owner.assign().orElseThrow();
        AccessTable holder = holder(s);

        assertTrue(owner.revoke(s, Duration.ofSeconds(5)).quiet());

        assertEquals(AccessTable.RELEASED, holder.enter(s));
        assertFalse(holder.isCurrent(s));
    }

    @Test
    void revoke_copyInFlight_returnsOnceHolderExits() throws Exception {
        AccessTable.Slot s = owner.assign().orElseThrow();
        AccessTable holder = holder(s);
        int row = holder.enter(s);
        CompletableFuture<AccessTable.Revoked> revoked = CompletableFuture.supplyAsync(() -> owner.revoke(s, LONG_WAIT));
        while (holder.isCurrent(s)) {
            Thread.onSpinWait();    // the owner has unpublished the slot and is now waiting for the row
        }

        holder.exit(row);

        assertTrue(revoked.get(30, TimeUnit.SECONDS).quiet());
        assertEquals(AccessTable.RELEASED, holder.enter(s));
    }

    @Test
    void revoke_unknownOrFreeSlot_returnsAtOnce() {
        assertTrue(owner.revoke(new AccessTable.Slot(7, 42), Duration.ofMillis(1)).quiet());
    }

    @Test
    void assign_onHolderView_throwsIllegalState() throws IOException {
        AccessTable holder = holder(owner.assign().orElseThrow());

        assertThrows(IllegalStateException.class, holder::assign);
    }

    @Test
    void attach_aMemoryFileThatIsNoTable_throws() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            var file = MemoryFile.create("not-a-table", 1 << 20, arena, f -> { });
            int fd = file.parked().take();
            try {
                var e = assertThrows(IOException.class, () -> AccessTable.attach(fd, fd));

                assertTrue(e.getMessage().contains("holds no rdma4j access table"), e.getMessage());
            } finally {
                Libc.close(fd);
            }
        }
    }

    @Test
    void withdraw_refusesNewEntries_andTheReleaseStillFreesTheSlot() throws IOException {
        AccessTable.Slot s = owner.assign().orElseThrow();
        AccessTable holder = holder(s);

        assertTrue(owner.withdraw(s));

        assertEquals(AccessTable.RELEASED, holder.enter(s));
        assertFalse(owner.withdraw(s), "already withdrawn");
        assertTrue(owner.revoke(s, Duration.ofSeconds(10)).quiet());
        assertEquals(s.index(), owner.assign().orElseThrow().index(), "the slot is free again");
    }

    @Test
    void withdraw_ofASlotReassignedSince_leavesTheNewBufferPublished() throws IOException {
        AccessTable.Slot old = owner.assign().orElseThrow();
        owner.revoke(old, Duration.ofSeconds(10));
        AccessTable.Slot now = owner.assign().orElseThrow();

        assertFalse(owner.withdraw(old));

        assertEquals(old.index(), now.index());
        assertTrue(holder(now).isCurrent(now));
    }

    // ---- hostile holders: what one that was handed the table can and cannot do

    /**
     * A holder granted buffer A announces copies of buffer B, which it was never granted (it read
     * B's generation from the slots): B's release does not wait for it.
     */
    @Test
    void rowsAnnouncingABufferTheHolderWasNotGranted_doNotDelayItsRelease() throws IOException {
        AccessTable.Slot a = owner.assign().orElseThrow();
        AccessTable.Slot b = owner.assign().orElseThrow();
        AccessTable hostile = holder(a);
        assertTrue(hostile.enter(b) >= 0);                 // announced, never exited

        AccessTable.Revoked revoked = owner.revoke(b, LONG_WAIT);

        assertEquals(AccessTable.Revoked.QUIET, revoked);
    }

    /**
     * A holder that keeps announcing buffers it was granted delays the first release past which
     * it keeps its row by the whole wait, and no later one: it is stalled, ignored from then on.
     */
    @Test
    void holderKeepingARowPastTheWait_isStalled_andNoLaterReleaseWaitsForIt() throws IOException {
        AccessTable.Slot a = owner.assign().orElseThrow();
        AccessTable.Slot b = owner.assign().orElseThrow();
        AccessTable hostile = holder(a);
        holder(b);
        assertTrue(hostile.enter(a) >= 0);
        assertTrue(hostile.enter(b) >= 0);
        assertEquals(List.of(SELF), owner.revoke(a, Duration.ofMillis(100)).waitedOut());

        AccessTable.Revoked second = owner.revoke(b, LONG_WAIT);

        assertEquals(new AccessTable.Revoked(List.of(), List.of(SELF)), second, "not waited for, only reported");
    }

    @Test
    void stalledHolder_isGrantedNothingMore() throws IOException {
        AccessTable.Slot a = owner.assign().orElseThrow();
        AccessTable hostile = holder(a);
        assertTrue(hostile.enter(a) >= 0);
        owner.revoke(a, Duration.ofMillis(100));
        AccessTable.Slot c = owner.assign().orElseThrow();

        var e = assertThrows(IOException.class, () -> owner.grant(SELF, c));

        assertTrue(e.getMessage().contains("kept copying a released buffer"), e.getMessage());
    }

    /** The slots file a holder is handed cannot be written by it: it can neither forge, revive nor withdraw a buffer. */
    @Test
    void slotsFileHandedToAHolder_cannotBeMappedWritableNorWritten() throws IOException {
        int fd = owner.parked().take();
        try (Arena arena = Arena.ofShared()) {
            var mapping = assertThrows(IOException.class, () -> MemoryFile.map(fd, 4096, arena));
            assertTrue(mapping.getMessage().contains("errno 1"), mapping.getMessage());     // EPERM
            assertThrows(IOException.class, () -> {
                try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.WRITE)) {
                    channel.write(java.nio.ByteBuffer.allocate(8), 64);
                }
            });
        } finally {
            Libc.close(fd);
        }
    }
}
