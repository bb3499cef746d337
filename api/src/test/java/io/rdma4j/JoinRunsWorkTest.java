package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider.SubmitMode;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transport whose future implements {@link io.rdma4j.spi.RunOnJoin} has its pending work run
 * by the thread that joins the action's future, instead of waking one of its own threads for it.
 */
@Timeout(30) // without the join hook these hang: fail instead
class JoinRunsWorkTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    @Test
    void join_onSubmit_runsTheTransportsPendingWorkOnTheJoiningThread() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager owner = managers.start(new StubProvider("stub", 1));
        RdmaManager holder = managers.start(stub);
        MemorySegment owned = arena.allocate(8).fill((byte) 7);
        RdmaRemoteBuffer remote = owner.register(owned).join();
        MemorySegment local = arena.allocate(8);
        stub.submitMode = SubmitMode.RUN_BY_WAITER;

        CompletableFuture<Void> f = holder.newAction().readInto(remote, local).submit(TIMEOUT);
        assertFalse(f.isDone(), "nothing runs the stub's work but a waiting thread");
        f.join();

        assertEquals(List.of(Thread.currentThread()), stub.ranOn);
        assertEquals((byte) 7, local.get(ValueLayout.JAVA_BYTE, 7));
    }

    @Test
    void join_onSubmitForResult_completesWithTheResult() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager holder = managers.start(stub);
        RdmaRemoteBuffer remote = holder.register(arena.allocate(64)).join();
        stub.submitMode = SubmitMode.RUN_BY_WAITER;

        RdmaResult r = holder.newAction().writeFrom(remote, arena.allocate(64)).submitForResult(TIMEOUT).join();

        assertEquals(List.of(Thread.currentThread()), stub.ranOn);
        assertEquals(64, r.bytes());
        assertEquals(List.of("stub"), r.transports());
    }

    @Test
    void dependentStages_doNotRunTheWork_theJoinOfTheActionsFutureDoes() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager holder = managers.start(stub);
        RdmaRemoteBuffer remote = holder.register(arena.allocate(8)).join();
        stub.submitMode = SubmitMode.RUN_BY_WAITER;

        CompletableFuture<Void> f = holder.newAction().readInto(remote, arena.allocate(8)).submit(TIMEOUT);
        CompletableFuture<String> dependent = f.thenApply(ok -> "done");
        assertFalse(dependent.isDone());
        f.join();

        assertEquals("done", dependent.join());
        assertEquals(1, stub.ranOn.size());
    }

    @Test
    void submitAndWait_overTwoTransports_runsEachPendingWorkOnTheCallingThread() {
        StubProvider fast = new StubProvider("fast", 200);
        StubProvider slow = new StubProvider("slow", 100);
        RdmaManager fastOwner = managers.start(new StubProvider("fast", 200));
        RdmaManager slowOwner = managers.start(new StubProvider("slow", 100));
        RdmaManager holder = managers.start(fast, slow);
        RdmaRemoteBuffer onFast = fastOwner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer onSlow = slowOwner.register(arena.allocate(8)).join();
        fast.submitMode = SubmitMode.RUN_BY_WAITER;
        slow.submitMode = SubmitMode.RUN_BY_WAITER;

        RdmaResult r = holder.newAction().readInto(onFast, arena.allocate(8)).readInto(onSlow, arena.allocate(8))
                .submitAndWait(TIMEOUT);

        assertEquals(List.of(Thread.currentThread()), fast.ranOn);
        assertEquals(List.of(Thread.currentThread()), slow.ranOn);
        assertEquals(2, r.ops());
    }

    @Test
    void join_afterCompletion_runsNothingMore() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager holder = managers.start(stub);
        RdmaRemoteBuffer remote = holder.register(arena.allocate(8)).join();
        stub.submitMode = SubmitMode.RUN_BY_WAITER;
        CompletableFuture<Void> f = holder.newAction().readInto(remote, arena.allocate(8)).submit(TIMEOUT);

        f.join();
        f.join();

        assertEquals(1, stub.ranOn.size());
        assertTrue(f.isDone());
    }
}
