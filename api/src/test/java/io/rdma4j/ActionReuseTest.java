package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * An action submitted again and again reuses how its ops were routed before, and only while
 * nothing that routing depends on changed: its ops, the transports it requires, the liveness of
 * its local segments, and the registrations its local memory came from.
 */
class ActionReuseTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager holder(StubProvider... providers) {
        return managers.track(RdmaManager.newBuilder().isolated().providers(List.of(providers)).build());
    }

    private long submits(StubProvider p) {
        return p.events.stream().filter(e -> e.startsWith("submit")).count();
    }

    /** The plan is kept from an action's second submit on: after this, the next submit may reuse it. */
    private static void submitTwice(RdmaAction action) {
        action.submitAndWait(TIMEOUT);
        action.submit(TIMEOUT).join();
    }

    @Test
    void actionSubmittedAgain_afterAnOpWasAdded_sendsTheNewOpToo() {
        StubProvider holderSide = new StubProvider("stub", 1);
        RdmaManager holder = holder(holderSide);
        RdmaRemoteBuffer remote = managers.start(new StubProvider("stub", 1)).allocate(64).join().remote();
        RdmaAction action = holder.newAction().readInto(remote, managers.arena().allocate(64));
        submitTwice(action);

        RdmaResult result = action.writeFrom(remote, managers.arena().allocate(64)).submitAndWait(TIMEOUT);

        assertEquals(2, result.ops());
        assertEquals("submit 2", holderSide.events.getLast());
    }

    @Test
    void actionSubmittedAgain_afterRequireTransport_goesOnlyOverTheRequiredTransport() {
        RdmaManager owner = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaManager holder = holder(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer remote = owner.allocate(64).join().remote();
        RdmaAction action = holder.newAction().readInto(remote, managers.arena().allocate(64));
        submitTwice(action);
        assertEquals(List.of("fast"), action.submitAndWait(TIMEOUT).transports());

        RdmaResult result = action.requireTransport("slow").submitAndWait(TIMEOUT);

        assertEquals(List.of("slow"), result.transports());
    }

    @Test
    void actionSubmittedAgain_afterItsLocalSegmentsArenaClosed_failsBeforeAnythingIsSent() {
        StubProvider holderSide = new StubProvider("stub", 1);
        RdmaManager holder = holder(holderSide);
        RdmaRemoteBuffer remote = managers.start(new StubProvider("stub", 1)).allocate(64).join().remote();
        Arena arena = Arena.ofShared();
        RdmaAction action = holder.newAction().readInto(remote, arena.allocate(64));
        submitTwice(action);
        long sent = submits(holderSide);
        arena.close();

        CompletionException e = assertThrows(CompletionException.class, () -> action.submit(TIMEOUT).join());

        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(sent, submits(holderSide), "nothing was sent");
    }

    @Test
    void actionSubmittedAgain_afterTheRegistrationItsLocalMemoryCameFromWasReleased_carriesFreshlyPreparedMemory() {
        StubProvider holderSide = new StubProvider("verbs", 1);
        holderSide.preparesLocal = true;
        RdmaManager holder = holder(holderSide);
        RdmaRemoteBuffer remote = managers.start(new StubProvider("verbs", 1)).allocate(64).join().remote();
        MemorySegment local = managers.arena().allocate(4096, 4096);
        RdmaRemoteBuffer mine = holder.register(local).join();
        RdmaAction action = holder.newAction().readInto(remote, local.asSlice(0, 64));
        submitTwice(action);
        assertEquals(List.of(), holderSide.prepared, "the registration's memory was used");
        holder.release(mine).join();

        action.submitAndWait(TIMEOUT);

        assertEquals(List.of(local.address()), holderSide.prepared, "the op's memory was prepared afresh");
    }

    @Test
    void actionSubmittedAgain_overLocalMemoryFromTheTransportsCache_reusesItsRouting_andTheMemoryPreparedOnce() {
        StubProvider holderSide = new StubProvider("verbs", 1);
        holderSide.preparesLocal = true;
        RdmaManager holder = holder(holderSide);
        RdmaRemoteBuffer remote = managers.start(new StubProvider("verbs", 1)).allocate(64).join().remote();
        MemorySegment local = managers.arena().allocate(64, 64);     // registered nowhere: its memory comes from the cache
        RdmaAction action = holder.newAction();
        for (int i = 0; i < 8; i++) {
            action.writeFrom(remote, local);
        }
        submitTwice(action);
        List<?> routed = holderSide.opsOfLastSubmit;

        action.submitAndWait(TIMEOUT);
        action.submit(TIMEOUT).join();

        assertTrue(routed == holderSide.opsOfLastSubmit, "the ops as routed before, not routed afresh");
        assertEquals(List.of(local.address()), holderSide.prepared, "prepared once");
        assertEquals(List.of(), holderSide.closedLocal, "still cached, not closed");
    }

    @Test
    void actionSubmittedAgain_afterItsCachedLocalMemoryWasEvicted_carriesFreshlyPreparedMemory() {
        StubProvider holderSide = new StubProvider("verbs", 1);
        holderSide.preparesLocal = true;
        RdmaManager holder = managers.track(RdmaManager.newBuilder().isolated().providers(List.of(holderSide))
                .set("rdma.localMemoryCacheEntries", "1").build());
        RdmaRemoteBuffer remote = managers.start(new StubProvider("verbs", 1)).allocate(64).join().remote();
        MemorySegment local = managers.arena().allocate(64, 64);
        MemorySegment other = managers.arena().allocate(64, 64);
        RdmaAction action = holder.newAction().writeFrom(remote, local).writeFrom(remote, local);
        submitTwice(action);
        List<?> routed = holderSide.opsOfLastSubmit;
        holder.newAction().writeFrom(remote, other).submitAndWait(TIMEOUT);       // evicts the entry of local: one entry at most
        assertEquals(List.of(local.address()), holderSide.closedLocal, "evicted and closed, its ops done");

        action.submitAndWait(TIMEOUT);

        assertTrue(routed != holderSide.opsOfLastSubmit, "routed afresh");
        assertEquals(List.of(local.address(), other.address(), local.address()), holderSide.prepared);
        assertEquals(List.of(local.address(), local.address()), holderSide.localMemoryOfLastSubmit);
    }
}
