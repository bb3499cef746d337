package io.rdma4j.shm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AccessTableTest {

    private static final long SELF = ProcessHandle.current().pid();

    private AccessTable owner;
    private AccessTable holder;

    @BeforeEach
    void open() throws IOException {
        owner = AccessTable.create();
        holder = Tables.handedOver(owner);                // a second mapping of the same pages
    }

    @AfterEach
    void close() {
        holder.close();
        owner.close();
        owner.close();                                     // idempotent
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
    void assign_afterRevoke_reusesSlotWithNewGeneration() {
        AccessTable.Slot first = owner.assign().orElseThrow();
        assertTrue(owner.revoke(first, Duration.ofSeconds(5)));

        AccessTable.Slot second = owner.assign().orElseThrow();

        assertEquals(first.index(), second.index());
        assertTrue(second.generation() > first.generation());
        assertEquals(AccessTable.RELEASED, holder.enter(first), "the old generation stays refused");
    }

    @Test
    void enter_publishedSlot_claimsRowSeenThroughOtherMapping() {
        AccessTable.Slot s = owner.assign().orElseThrow();

        int row = holder.enter(s);

        assertTrue(row >= 0);
        assertTrue(holder.isCurrent(s));
        assertFalse(owner.revoke(s, Duration.ofMillis(50)), "the owner sees the copy in flight");
        holder.exit(row);
    }

    @Test
    void enter_afterRevoke_isRefused() {
        AccessTable.Slot s = owner.assign().orElseThrow();

        assertTrue(owner.revoke(s, Duration.ofSeconds(5)));

        assertEquals(AccessTable.RELEASED, holder.enter(s));
        assertFalse(holder.isCurrent(s));
    }

    @Test
    void revoke_copyInFlight_returnsOnceHolderExits() throws Exception {
        AccessTable.Slot s = owner.assign().orElseThrow();
        int row = holder.enter(s);
        CompletableFuture<Boolean> revoked = CompletableFuture.supplyAsync(() -> owner.revoke(s, Duration.ofSeconds(30)));
        while (holder.isCurrent(s)) {
            Thread.onSpinWait();    // the owner has unpublished the slot and is now waiting for the row
        }

        holder.exit(row);

        assertTrue(revoked.get(30, TimeUnit.SECONDS));
        assertEquals(AccessTable.RELEASED, holder.enter(s));
    }

    @Test
    void revoke_unknownOrFreeSlot_returnsAtOnce() {
        assertTrue(owner.revoke(new AccessTable.Slot(7, 42), Duration.ofMillis(1)));
    }

    @Test
    void assign_onHolderView_throwsIllegalState() {
        assertThrows(IllegalStateException.class, () -> holder.assign());
    }

    @Test
    void attach_aMemoryFileThatIsNoTable_throws() throws IOException {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            var file = io.rdma4j.shm.ffi.MemoryFile.create("not-a-table", 1 << 20, arena, f -> { });
            int fd = file.parked().take();
            try {
                var e = assertThrows(IOException.class, () -> AccessTable.attach(fd));

                assertTrue(e.getMessage().contains("holds no rdma4j access table"), e.getMessage());
            } finally {
                io.rdma4j.shm.ffi.Libc.close(fd);
            }
        }
    }

    @Test
    void withdraw_refusesNewEntries_andTheReleaseStillFreesTheSlot() {
        AccessTable.Slot s = owner.assign().orElseThrow();

        assertTrue(owner.withdraw(s));

        assertEquals(AccessTable.RELEASED, holder.enter(s));
        assertFalse(owner.withdraw(s), "already withdrawn");
        assertTrue(owner.revoke(s, java.time.Duration.ofSeconds(10)));
        assertEquals(s.index(), owner.assign().orElseThrow().index(), "the slot is free again");
    }

    @Test
    void withdraw_ofASlotReassignedSince_leavesTheNewBufferPublished() {
        AccessTable.Slot old = owner.assign().orElseThrow();
        owner.revoke(old, java.time.Duration.ofSeconds(10));
        AccessTable.Slot now = owner.assign().orElseThrow();

        assertFalse(owner.withdraw(old));

        assertEquals(old.index(), now.index());
        assertTrue(holder.isCurrent(now));
    }
}
