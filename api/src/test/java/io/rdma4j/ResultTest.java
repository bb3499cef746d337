package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Completed actions say what happened: transports used, ops, bytes moved, time taken. */
class ResultTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    @Test
    void submitForResult_completesWithTheTransportOpsBytesAndDuration() {
        RdmaManager owner = managers.start(new StubProvider("stub", 1));
        RdmaManager holder = managers.start(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = owner.register(arena.allocate(256)).join();

        RdmaResult r = holder.newAction().readInto(remote, arena.allocate(300)).writeFrom(remote, arena.allocate(10))
                .submitForResult(TIMEOUT).join();

        assertEquals(List.of("stub"), r.transports());
        assertEquals(2, r.ops());
        assertEquals(266, r.bytes());
        assertFalse(r.duration().isNegative());
    }

    @Test
    void submitForResult_opsOverTwoTransports_namesBothInPreferenceOrder() {
        RdmaManager fastOwner = managers.start(new StubProvider("fast", 200));
        RdmaManager slowOwner = managers.start(new StubProvider("slow", 100));
        RdmaManager holder = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer onSlow = slowOwner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer onFast = fastOwner.register(arena.allocate(8)).join();

        RdmaResult r = holder.newAction().readInto(onSlow, arena.allocate(8)).readInto(onFast, arena.allocate(8))
                .submitForResult(TIMEOUT).join();

        assertEquals(List.of("slow", "fast"), r.transports()); // in the order the ops first used them
        assertEquals(16, r.bytes());
    }

    @Test
    void submits_alternatingBetweenTokensOfTwoTransports_eachGoToItsTokensTransport() {
        RdmaManager fastOwner = managers.start(new StubProvider("fast", 200));
        RdmaManager slowOwner = managers.start(new StubProvider("slow", 100));
        RdmaManager holder = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer onSlow = slowOwner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer onFast = fastOwner.register(arena.allocate(8)).join();

        for (int i = 0; i < 4; i++) {
            assertEquals(List.of("slow"), holder.newAction().readInto(onSlow, arena.allocate(8)).submitAndWait(TIMEOUT).transports());
            assertEquals(List.of("slow"), holder.newAction().readInto(onSlow, arena.allocate(8)).submitAndWait(TIMEOUT).transports());
            assertEquals(List.of("fast"), holder.newAction().readInto(onFast, arena.allocate(8)).submitAndWait(TIMEOUT).transports());
        }
    }

    @Test
    void submitAndWait_returnsTheResult() {
        RdmaManager m = managers.start(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(64)).join();

        RdmaResult r = m.newAction().writeFrom(remote, arena.allocate(64)).submitAndWait(TIMEOUT);

        assertEquals(new RdmaResult(List.of("stub"), 1, 64, r.duration()), r);
    }

    @Test
    void submit_emptyAction_resultHasNoTransportAndNoBytes() {
        RdmaManager m = managers.start(new StubProvider("stub", 1));

        assertEquals(new RdmaResult(List.of(), 0, 0, Duration.ZERO), m.newAction().submitForResult(TIMEOUT).join());
    }

    @Test
    void submit_oldSignature_stillCompletesWithNullAndFailsWithTheCause() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager m = managers.start(stub);
        RdmaRemoteBuffer remote = m.register(arena.allocate(8)).join();

        assertNull(m.newAction().readInto(remote, arena.allocate(8)).submit(TIMEOUT).join());
        stub.submitMode = StubProvider.SubmitMode.FAIL;
        CompletableFuture<Void> failed = m.newAction().readInto(remote, arena.allocate(8)).submit(TIMEOUT);
        assertTrue(failed.handle((ok, t) -> t).join() instanceof java.util.concurrent.CompletionException);
        assertTrue(failed.exceptionNow() instanceof RdmaSubmitException, failed.exceptionNow().toString());
    }
}
