package io.rdma4j;

import io.rdma4j.internal.LocalMemorySweeper;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Prepared local memory: made once per segment, never for registered memory, closed exactly once, swept only while cached. */
class LocalMemoryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    final Managers managers = new Managers();

    private final StubProvider ownerSide = new StubProvider("verbs", 1);
    private final StubProvider holderSide = new StubProvider("verbs", 1);

    private RdmaManager holder(String... settings) {
        return holder(NanoClock.SYSTEM, settings);
    }

    private RdmaManager holder(NanoClock clock, String... settings) {
        holderSide.preparesLocal = true;
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(List.of(holderSide)).clock(clock);
        for (int i = 0; i < settings.length; i += 2) {
            b.set(settings[i], settings[i + 1]);
        }
        return managers.track(b.build());
    }

    private RdmaRemoteBuffer remote() {
        return managers.start(ownerSide).allocate(64).join().remote();
    }

    @Test
    void localSegment_isPreparedOnce_andItsPreparationIsReusedByLaterOps() {
        RdmaManager holder = holder();
        RdmaRemoteBuffer remote = remote();
        MemorySegment local = managers.arena().allocate(64);

        holder.read(remote, local, TIMEOUT).join();
        holder.read(remote, local, TIMEOUT).join();

        assertEquals(List.of(local.address()), holderSide.prepared);
        assertEquals(List.of(local.address()), holderSide.localMemoryOfLastSubmit);
    }

    @Test
    void localSegmentInsideARegisteredBuffer_usesTheRegistrationsMemory_andIsNeverPrepared() {
        RdmaManager holder = holder();
        RdmaRemoteBuffer remote = remote();
        RdmaBuffer mine = holder.allocate(4096).join();

        holder.read(remote, mine.segment().asSlice(1024, 64), TIMEOUT).join();

        assertTrue(holderSide.prepared.isEmpty(), "registered memory was prepared again: " + holderSide.prepared);
        assertEquals(List.of(mine.segment().address()), holderSide.localMemoryOfLastSubmit);
    }

    @Test
    void arenaClosed_thePreparationIsClosedAtTheNextSweep() {
        RdmaManager holder = holder();
        RdmaRemoteBuffer remote = remote();
        Arena arena = Arena.ofShared();
        MemorySegment local = arena.allocate(64);
        holder.read(remote, local, TIMEOUT).join();
        long address = local.address();

        arena.close();
        holder.sweepLocalMemory();

        assertEquals(List.of(address), holderSide.closedLocal);
    }

    @Test
    void sameAddressAndSizeInANewArena_afterTheFirstClosed_isPreparedAfresh() {
        RdmaManager holder = holder();
        RdmaRemoteBuffer remote = remote();
        MemorySegment backing = managers.arena().allocate(64);      // both arenas' views of the same bytes
        Arena first = Arena.ofShared();
        holder.read(remote, backing.reinterpret(first, null), TIMEOUT).join();
        holder.read(remote, backing.reinterpret(first, null), TIMEOUT).join();
        first.close();
        Arena second = Arena.ofShared();

        holder.read(remote, backing.reinterpret(second, null), TIMEOUT).join();

        assertEquals(List.of(backing.address(), backing.address()), holderSide.prepared);
        assertEquals(List.of(backing.address()), holderSide.closedLocal, "the first arena's preparation was closed");
        second.close();
    }

    @Test
    void moreSegmentsThanTheCacheHolds_evictedPreparationsAreClosed_andEachIsClosedOnceByTheEnd() {
        RdmaManager holder = holder("rdma.localMemoryCacheEntries", "2");
        RdmaRemoteBuffer remote = remote();
        for (int i = 0; i < 20; i++) {
            holder.read(remote, managers.arena().allocate(64), TIMEOUT).join();
        }
        holder.sweepLocalMemory();

        assertTrue(holderSide.closedLocal.size() >= 18, "at most 2 kept, closed: " + holderSide.closedLocal.size());
        holder.close();
        assertEquals(new HashSet<>(holderSide.prepared), new HashSet<>(holderSide.closedLocal));
        assertEquals(holderSide.prepared.size(), holderSide.closedLocal.size(), "closed exactly once each");
    }

    @Test
    void sweeps_scheduleNoneWhileNothingIsCached_backOffWhileNothingIsDropped_andComeBackWithANewEntry() {
        NanoClock stopped = () -> 0;           // the watchdog never finds a sweep due: the test runs each one
        RdmaManager holder = holder(stopped);
        LocalMemorySweeper sweeper = holder.localMemorySweeper();
        RdmaRemoteBuffer remote = remote();
        assertNull(sweeper.nextDelay(), "nothing cached: no sweep scheduled");
        Arena arena = Arena.ofShared();
        holder.read(remote, arena.allocate(64), TIMEOUT).join();
        List<Duration> delays = new ArrayList<>(List.of(sweeper.nextDelay()));
        for (int i = 0; i < 7; i++) {
            holder.sweepLocalMemory();         // drops nothing: the arena is open
            delays.add(sweeper.nextDelay());
        }

        arena.close();
        holder.sweepLocalMemory();
        Duration afterDrop = sweeper.nextDelay();
        long scheduledWhileEmpty = sweeper.scheduledCount();
        holder.sweepLocalMemory();
        long scheduledAfterAnotherSweep = sweeper.scheduledCount();
        holder.read(remote, managers.arena().allocate(64), TIMEOUT).join();

        assertAll(
                () -> assertEquals(Stream.of(1, 2, 4, 8, 16, 32, 32, 32).map(Duration::ofSeconds).toList(), delays,
                        "doubling up to 32 s while nothing is dropped"),
                () -> assertEquals(1, holderSide.closedLocal.size(), "the closed arena's preparation was dropped"),
                () -> assertNull(afterDrop, "nothing cached any more: no sweep scheduled"),
                () -> assertEquals(scheduledWhileEmpty, scheduledAfterAnotherSweep, "an empty cache schedules nothing"),
                () -> assertEquals(Duration.ofSeconds(1), sweeper.nextDelay(), "a new entry: a sweep within 1 s"));
    }

    @Test
    void newEntry_bringsABackedOffSweepBackToOneSecond() {
        RdmaManager holder = holder(() -> 0);
        LocalMemorySweeper sweeper = holder.localMemorySweeper();
        RdmaRemoteBuffer remote = remote();
        holder.read(remote, managers.arena().allocate(64), TIMEOUT).join();
        for (int i = 0; i < 5; i++) {
            holder.sweepLocalMemory();
        }
        assertEquals(Duration.ofSeconds(32), sweeper.nextDelay());

        holder.read(remote, managers.arena().allocate(64), TIMEOUT).join();

        assertEquals(Duration.ofSeconds(1), sweeper.nextDelay());
    }

    @Test
    void transportThatPreparesNothing_opsCarryNoLocalMemory() {
        RdmaManager holder = managers.start(holderSide);
        RdmaRemoteBuffer remote = remote();

        holder.read(remote, managers.arena().allocate(64), TIMEOUT).join();

        assertTrue(holderSide.prepared.isEmpty());
        assertEquals(List.of(0L), holderSide.localMemoryOfLastSubmit);
    }
}
