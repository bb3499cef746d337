package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.posting.Chunk;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Where a completion's work request id finds its chunk: each id once, never another chunk's. */
class WorkRequestTableTest {

    private static Chunk chunk() {
        return new Chunk(null, 0, Ibv.IBV_WR_RDMA_READ, 0x1000, 8, 1, 0x2000, 2, null, 0);
    }

    @Test
    void add_thenTake_returnsTheChunkOnceUnderTheIdItWasGiven() {
        WorkRequestTable table = new WorkRequestTable(4);
        Chunk c = chunk();

        long id = table.add(c);

        assertEquals(id, c.workRequestId);
        assertSame(c, table.take(id));
        assertNull(table.take(id));
    }

    @Test
    void take_ofAnIdWhoseSlotWentToALaterChunk_findsNothingAndLeavesTheLaterOne() {
        WorkRequestTable table = new WorkRequestTable(1);       // 2 slots: ids 1 and 3 share one
        long first = table.add(chunk());
        table.take(first);
        table.add(chunk());
        Chunk later = chunk();
        long laterId = table.add(later);

        assertEquals(first & 1, laterId & 1);
        assertNull(table.take(first));
        assertSame(later, table.take(laterId));
    }

    @Test
    void add_skipsSlotsOfChunksStillInFlight() {
        WorkRequestTable table = new WorkRequestTable(2);       // 4 slots
        Chunk held = chunk();
        long heldId = table.add(held);
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            ids.add(table.take(table.add(chunk())).workRequestId);
        }

        long next = table.add(chunk());

        assertNotEquals(heldId & 3, next & 3);
        assertEquals(3, ids.size());
        assertSame(held, table.take(heldId));
    }

    @Test
    void add_everySlotTaken_failsInsteadOfSpinning() {
        WorkRequestTable table = new WorkRequestTable(1);
        table.add(chunk());
        table.add(chunk());

        assertThrows(IllegalStateException.class, () -> table.add(chunk()));
    }

    @Test
    void takeAll_handsOverEveryTrackedChunkOnce() {
        WorkRequestTable table = new WorkRequestTable(8);
        List<Chunk> added = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Chunk c = chunk();
            table.add(c);
            added.add(c);
        }
        table.take(added.get(2).workRequestId);
        List<Chunk> taken = new ArrayList<>();

        table.takeAll(taken::add);
        table.takeAll(taken::add);

        assertEquals(Set.of(added.get(0), added.get(1), added.get(3), added.get(4)), new HashSet<>(taken));
        assertEquals(4, taken.size());
    }

    @Test
    void size_countsTheChunksTracked_afterAddsAndEachKindOfTake() {
        WorkRequestTable table = new WorkRequestTable(8);
        List<Chunk> added = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Chunk c = chunk();
            table.add(c);
            added.add(c);
        }
        table.take(added.get(0).workRequestId);
        table.take(added.get(0).workRequestId);        // taken already: no change
        assertEquals(4, table.size());
        table.takeIf(c -> c == added.get(1), c -> { });
        assertEquals(3, table.size());

        table.takeAll(c -> { });

        assertEquals(0, table.size());
    }
}
