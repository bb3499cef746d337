package io.rdma4j;

import io.rdma4j.spi.TransportException;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ActionTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    private RdmaManager manager(StubProvider... providers) {
        return managers.start(providers);
    }

    private MemorySegment filled(long size, int value) {
        MemorySegment s = arena.allocate(size);
        s.fill((byte) value);
        return s;
    }

    private static int at(MemorySegment s, long offset) {
        return s.get(ValueLayout.JAVA_BYTE, offset) & 0xff;
    }

    @Test
    void readInto_localSmallerThanRemote_rejectedNamingBothSizes() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(8192)).join();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> m.newAction().readInto(remote, arena.allocate(4096)));

        assertEquals("destination local memory size (4096) must be >= remote buffer size (8192)", e.getMessage());
    }

    @Test
    void writeFrom_localLargerThanRemote_rejectedNamingBothSizes() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(16)).join();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> m.newAction().writeFrom(remote, arena.allocate(17)));

        assertEquals("source local memory size (17) must be <= remote buffer size (16)", e.getMessage());
    }

    @Test
    void writeFrom_aReadOnlyBuffer_isRefusedAtOnce_nothingIsQueued_andReadsOfItWork() {
        RdmaManager owner = manager(new StubProvider("stub", 1));
        RdmaManager holder = manager(new StubProvider("stub", 1));
        MemorySegment bytes = filled(64, 5);
        RdmaRemoteBuffer remote = owner.register(bytes.asReadOnly()).join();
        RdmaAction action = holder.newAction();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> action.writeFrom(remote.slice(0, 8), filled(8, 9)));
        assertThrows(IllegalArgumentException.class, () -> holder.write(remote, filled(8, 9), TIMEOUT));
        MemorySegment back = filled(64, 0);
        action.readInto(remote, back).submit(TIMEOUT).join();

        assertEquals("cannot write to buffer " + remote.id() + ": it is read-only (its owner registered it without "
                + "remote write access); nothing was queued", e.getMessage());
        assertEquals(1, action.size(), "only the read was queued");
        assertEquals(-1, bytes.mismatch(back), "the read brought the owner's bytes");
        assertEquals(5, at(bytes, 0), "the owner's bytes are as they were");
    }

    @Test
    void add_rejectedOp_isNotQueued() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(16)).join();
        RdmaAction action = m.newAction();

        assertThrows(IllegalArgumentException.class, () -> action.writeFrom(remote, arena.allocate(17)));
        assertThrows(IllegalArgumentException.class, () -> action.readInto(remote, MemorySegment.ofArray(new byte[16])));

        assertEquals(0, action.size());
    }

    @Test
    void read_fillsTheLocalPrefix_andLeavesTheTailUntouched() {
        RdmaManager owner = manager(new StubProvider("stub", 1));
        RdmaManager reader = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = owner.register(filled(100, 7)).join();
        MemorySegment local = filled(150, 0xEE);

        reader.read(remote, local, TIMEOUT).join();

        assertEquals(7, at(local, 0));
        assertEquals(7, at(local, 99));
        assertEquals(0xEE, at(local, 100));
    }

    @Test
    void write_fillsTheRemotePrefix_andLeavesTheTailUntouched() {
        RdmaManager owner = manager(new StubProvider("stub", 1));
        RdmaManager writer = manager(new StubProvider("stub", 1));
        MemorySegment target = filled(150, 0xEE);
        RdmaRemoteBuffer remote = owner.register(target).join();

        writer.write(remote, filled(100, 9), TIMEOUT).join();

        assertEquals(9, at(target, 0));
        assertEquals(9, at(target, 99));
        assertEquals(0xEE, at(target, 100));
    }

    @Test
    void submit_emptyAction_succeedsWithoutCallingAnyTransport() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager m = manager(stub);

        m.newAction().submit(TIMEOUT).join();

        assertTrue(stub.events.stream().noneMatch(e -> e.startsWith("submit")));
    }

    @Test
    void submit_routesEachOpToTheFastestTransportBothSidesRun() {
        StubProvider ownerSlow = new StubProvider("slow", 100);
        RdmaManager owner = manager(ownerSlow);                       // advertises only "slow"
        StubProvider fast = new StubProvider("fast", 200);
        StubProvider slow = new StubProvider("slow", 100);
        RdmaManager caller = manager(fast, slow);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();

        caller.read(remote, arena.allocate(8), TIMEOUT).join();

        assertEquals(List.of("submit 1"), slow.events.stream().filter(e -> e.startsWith("submit")).toList());
        assertTrue(fast.events.stream().noneMatch(e -> e.startsWith("submit")));
    }

    @Test
    void submit_prefersTheHigherPriorityTransportWhenBothAreShared() {
        RdmaManager owner = manager(new StubProvider("fast", 200), new StubProvider("slow", 100));
        StubProvider fast = new StubProvider("fast", 200);
        StubProvider slow = new StubProvider("slow", 100);
        RdmaManager caller = manager(fast, slow);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();

        caller.read(remote, arena.allocate(8), TIMEOUT).join();

        assertTrue(fast.events.contains("submit 1"));
        assertTrue(slow.events.stream().noneMatch(e -> e.startsWith("submit")));
    }

    @Test
    void submit_transportThatCannotReachTheOwner_declines_andTheNextSharedTransportCarriesTheOp() {
        RdmaManager owner = manager(new StubProvider("near", 300), new StubProvider("far", 100));
        StubProvider near = new StubProvider("near", 300);
        near.decodeFailure = new TransportException(TransportException.Kind.PEER_UNREACHABLE, "owner on another host");
        StubProvider far = new StubProvider("far", 100);
        RdmaManager caller = manager(near, far);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();

        caller.read(remote, arena.allocate(8), TIMEOUT).join();

        assertTrue(near.events.stream().noneMatch(e -> e.startsWith("submit")), near.events.toString());
        assertTrue(far.events.contains("submit 1"), far.events.toString());
    }

    @Test
    void submit_everySharedTransportDeclines_failsWithNoCompatibleTransportNamingWhy() {
        RdmaManager owner = manager(new StubProvider("near", 300));
        StubProvider near = new StubProvider("near", 300);
        near.decodeFailure = new TransportException(TransportException.Kind.PEER_UNREACHABLE, "owner on another host");
        RdmaManager caller = manager(near);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class,
                () -> caller.read(remote, arena.allocate(8), TIMEOUT).join());

        assertInstanceOf(NoCompatibleTransportException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("declined: near: owner on another host"), e.getCause().getMessage());
    }

    @Test
    void submit_noCompatibleTransport_failsBeforeSendingAnything() {
        RdmaManager owner = manager(new StubProvider("verbs", 200));
        StubProvider tcp = new StubProvider("tcp", 100);
        RdmaManager caller = manager(tcp);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer ok = caller.register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class, () -> caller.newAction()
                .readInto(ok, arena.allocate(8)).readInto(remote, arena.allocate(8)).submit(TIMEOUT).join());

        assertInstanceOf(NoCompatibleTransportException.class, e.getCause());
        assertTrue(e.getCause().getMessage().startsWith("no compatible RDMA transport for buffer: "), e.getCause().getMessage());
        assertTrue(tcp.events.stream().noneMatch(s -> s.startsWith("submit")));
    }

    @Test
    void submit_failuresOnSeveralTransports_reportEachByName() {
        StubProvider a = new StubProvider("alpha", 200);
        StubProvider b = new StubProvider("beta", 100);
        a.submitMode = StubProvider.SubmitMode.FAIL;
        a.submitFailure = new TransportException(TransportException.Kind.REMOTE_ACCESS, "bad rkey");
        b.submitMode = StubProvider.SubmitMode.FAIL;
        b.submitFailure = new TransportException(TransportException.Kind.PEER_UNREACHABLE, "connection refused");
        RdmaManager caller = manager(a, b);
        RdmaRemoteBuffer viaAlpha = manager(new StubProvider("alpha", 1)).register(arena.allocate(8)).join();
        RdmaRemoteBuffer viaBeta = manager(new StubProvider("beta", 1)).register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class, () -> caller.newAction()
                .readInto(viaAlpha, arena.allocate(8)).writeFrom(viaBeta, arena.allocate(8)).submit(TIMEOUT).join());

        RdmaSubmitException se = assertInstanceOf(RdmaSubmitException.class, e.getCause());
        assertEquals("RDMA submit failed on 2 transport(s):\n(alpha) bad rkey\n(beta) connection refused", se.getMessage());
        assertInstanceOf(RemoteAccessException.class, se.failures().get("alpha"));
        assertInstanceOf(PeerUnreachableException.class, se.failures().get("beta"));
    }

    @Test
    void submit_failure_reachesGetAsTheCause_andDependentStagesAsACompletionExceptionAroundIt() throws Exception {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.FAIL;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();
        CompletableFuture<Void> f = caller.newAction().readInto(remote, arena.allocate(8)).submit(TIMEOUT);

        Throwable seenByStage = f.handle((ok, t) -> t).get();
        ExecutionException e = assertThrows(ExecutionException.class, f::get);

        assertInstanceOf(RdmaSubmitException.class, assertInstanceOf(CompletionException.class, seenByStage).getCause());
        assertInstanceOf(RdmaSubmitException.class, e.getCause());
    }

    @Test
    void submit_transportTimeout_surfacesAsRdmaTimeoutException() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.FAIL;
        s.submitFailure = new TransportException(TransportException.Kind.TIMEOUT, "tcp read of buffer 0 timed out");
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class,
                () -> caller.read(remote, arena.allocate(8), TIMEOUT).join());

        RdmaSubmitException se = assertInstanceOf(RdmaSubmitException.class, e.getCause());
        assertInstanceOf(RdmaTimeoutException.class, se.getCause());
        assertEquals("stub", se.transport());
    }

    @Test
    void submit_transportThatNeverAnswers_stillFailsWithATimeoutAfterTheDeadline() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.NEVER_COMPLETE;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class,
                () -> caller.read(remote, arena.allocate(8), Duration.ofMillis(50)).join());

        RdmaSubmitException se = assertInstanceOf(RdmaSubmitException.class, e.getCause());
        assertTrue(se.getMessage().contains("submit timed out"), se.getMessage());
        assertInstanceOf(RdmaTimeoutException.class, se.getCause());
    }

    @Test
    void cancel_ofTheReturnedFuture_cancelsTheTransportsFuture_soTheTransportStops() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.NEVER_COMPLETE;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();
        RdmaAction action = caller.newAction().readInto(remote, arena.allocate(8));
        CompletableFuture<Void> f = action.submit(TIMEOUT);

        assertTrue(f.cancel(true));

        assertTrue(s.lastSubmit.isCancelled(), "the transport's future was not cancelled");
        action.submit(TIMEOUT).cancel(true); // and the action can be submitted again
    }

    @Test
    void cancel_completesTheActionOnlyAfterTheTransportsCancelReturned() throws Exception {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.SLOW_TO_STOP;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();
        CompletableFuture<Void> f = caller.read(remote, arena.allocate(8), TIMEOUT);
        CompletableFuture<Boolean> transportDoneWhenActionEnded = f.handle((ok, failure) -> s.lastSubmit.isDone());

        CompletableFuture<Boolean> cancelling = CompletableFuture.supplyAsync(() -> f.cancel(false));
        assertTrue(s.cancelEntered.await(30, TimeUnit.SECONDS), "the transport's future was not cancelled");
        boolean doneWhileTheTransportStops = f.isDone();
        s.stopGate.countDown();

        assertFalse(doneWhileTheTransportStops, "the action completed while the transport was still stopping");
        assertTrue(cancelling.get(30, TimeUnit.SECONDS));
        assertTrue(f.isCancelled());
        assertTrue(transportDoneWhenActionEnded.get(30, TimeUnit.SECONDS));
    }

    @Test
    void transportThatOverrunsTheDeadline_isCancelled_soItStops_andTheActionFailsWithATimeout() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.NEVER_COMPLETE;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();

        CompletionException e = assertThrows(CompletionException.class,
                () -> caller.read(remote, arena.allocate(8), Duration.ofMillis(50)).join());

        assertTrue(s.lastSubmit.isCancelled(), "the overrunning transport's future was completed, not cancelled: " + s.lastSubmit);
        assertInstanceOf(RdmaTimeoutException.class, e.getCause().getCause());
    }

    @Test
    void submit_sameActionAgain_repeatsTheTransferAndSeesFreshData() {
        RdmaManager owner = manager(new StubProvider("stub", 1));
        RdmaManager caller = manager(new StubProvider("stub", 1));
        MemorySegment source = filled(32, 1);
        RdmaRemoteBuffer remote = owner.register(source).join();
        MemorySegment local = arena.allocate(32);
        RdmaAction action = caller.newAction().readInto(remote, local);

        action.submit(TIMEOUT).join();
        assertEquals(1, at(local, 31));
        source.fill((byte) 2);
        action.submit(TIMEOUT).join();

        assertEquals(2, at(local, 31));
    }

    @Test
    void submit_whileThePreviousSubmitRuns_isRejected_andAddingIsToo() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.NEVER_COMPLETE;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();
        RdmaAction action = caller.newAction().readInto(remote, arena.allocate(8));
        CompletableFuture<Void> first = action.submit(Duration.ofSeconds(30));

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> action.submit(TIMEOUT));
        assertThrows(IllegalStateException.class, () -> action.readInto(remote, arena.allocate(8)));

        assertTrue(e.getMessage().contains("currently being submitted"), e.getMessage());
        caller.close();
        first.cancel(true);
    }

    @Test
    void submit_negativeTimeout_rejected() {
        RdmaManager m = manager(new StubProvider("stub", 1));

        assertThrows(IllegalArgumentException.class, () -> m.newAction().submit(Duration.ofSeconds(-1)));
    }

    @Test
    void submit_localArenaClosedAfterAdding_failsCleanly() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(8)).join();
        Arena local = Arena.ofShared();
        RdmaAction action = m.newAction().readInto(remote, local.allocate(8));
        local.close();

        CompletionException e = assertThrows(CompletionException.class, () -> action.submit(TIMEOUT).join());

        assertInstanceOf(IllegalStateException.class, e.getCause());
    }

    @Test
    void readInto_threadConfinedLocalSegment_rejectedSayingWhichArenasWork() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(8)).join();

        try (Arena confined = Arena.ofConfined()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> m.newAction().readInto(remote, confined.allocate(8)));

            assertTrue(e.getMessage().contains("thread-confined"), e.getMessage());
            assertTrue(e.getMessage().contains("Arena.ofShared()"), e.getMessage());
        }
    }

    @Test
    void submit_onClosedManager_failsWithManagerClosed() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(8)).join();
        RdmaAction action = m.newAction().readInto(remote, arena.allocate(8));
        m.close();

        CompletionException e = assertThrows(CompletionException.class, () -> action.submit(TIMEOUT).join());

        assertInstanceOf(ManagerClosedException.class, e.getCause());
    }

    @Test
    void write_oneLocalSourceFeedingTwoWrites_isAllowed() {
        RdmaManager m = manager(new StubProvider("stub", 1));
        MemorySegment a = arena.allocate(8);
        MemorySegment b = arena.allocate(8);
        RdmaRemoteBuffer ra = m.register(a).join();
        RdmaRemoteBuffer rb = m.register(b).join();

        m.newAction().writeFrom(ra, filled(8, 3)).writeFrom(rb, filled(8, 3)).submit(TIMEOUT).join();

        assertEquals(3, at(a, 7));
        assertEquals(3, at(b, 7));
    }

    @Test
    void submitAndWait_movesTheSameBytesAsSubmit_beforeReturning() {
        RdmaManager owner = manager(new StubProvider("stub", 1));
        RdmaManager caller = manager(new StubProvider("stub", 1));
        MemorySegment target = filled(64, 0);
        RdmaRemoteBuffer remote = owner.register(target).join();
        MemorySegment copy = arena.allocate(64);

        caller.newAction().writeFrom(remote, filled(32, 5)).submitAndWait(TIMEOUT);
        caller.newAction().readInto(remote, copy).submitAndWait(TIMEOUT);

        assertEquals(5, at(target, 31));
        assertEquals(0, at(target, 32));
        assertEquals(5, at(copy, 0));
    }

    @Test
    void submitAndWait_transportFails_throwsRdmaSubmitExceptionNamingIt() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.FAIL;
        s.submitFailure = new TransportException(TransportException.Kind.REMOTE_ACCESS, "buffer 0 was released");
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();
        RdmaAction action = caller.newAction().readInto(remote, arena.allocate(8));

        RdmaSubmitException e = assertThrows(RdmaSubmitException.class, () -> action.submitAndWait(TIMEOUT));

        assertEquals("RDMA submit failed on 1 transport(s):\n(stub) buffer 0 was released", e.getMessage());
        assertInstanceOf(RemoteAccessException.class, e.getCause());
        s.submitMode = StubProvider.SubmitMode.COPY;
        action.submitAndWait(TIMEOUT); // a failure leaves the action usable
    }

    @Test
    void submitAndWait_noCompatibleTransport_throwsBeforeSendingAnything() {
        RdmaManager owner = manager(new StubProvider("verbs", 200));
        StubProvider tcp = new StubProvider("tcp", 100);
        RdmaManager caller = manager(tcp);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(8)).join();

        assertThrows(NoCompatibleTransportException.class,
                () -> caller.newAction().readInto(remote, arena.allocate(8)).submitAndWait(TIMEOUT));

        assertTrue(tcp.events.stream().noneMatch(e -> e.startsWith("submit")));
    }

    @Test
    void submitAndWait_transportThatNeverAnswers_throwsATimeoutAfterTheDeadline() {
        StubProvider s = new StubProvider("stub", 1);
        s.submitMode = StubProvider.SubmitMode.NEVER_COMPLETE;
        RdmaManager caller = manager(s);
        RdmaRemoteBuffer remote = caller.register(arena.allocate(8)).join();

        RdmaSubmitException e = assertThrows(RdmaSubmitException.class,
                () -> caller.newAction().readInto(remote, arena.allocate(8)).submitAndWait(Duration.ofMillis(50)));

        assertInstanceOf(RdmaTimeoutException.class, e.getCause());
    }

    @Test
    void submitAndWait_opsOnTwoTransports_waitsForBoth() {
        RdmaManager viaAlpha = manager(new StubProvider("alpha", 1));
        RdmaManager viaBeta = manager(new StubProvider("beta", 1));
        StubProvider alpha = new StubProvider("alpha", 200);
        StubProvider beta = new StubProvider("beta", 100);
        RdmaManager caller = manager(alpha, beta);
        MemorySegment a = filled(8, 0);
        MemorySegment b = filled(8, 0);
        RdmaRemoteBuffer ra = viaAlpha.register(a).join();
        RdmaRemoteBuffer rb = viaBeta.register(b).join();

        caller.newAction().writeFrom(ra, filled(8, 1)).writeFrom(rb, filled(8, 2)).submitAndWait(TIMEOUT);

        assertEquals(1, at(a, 7));
        assertEquals(2, at(b, 7));
        assertTrue(alpha.events.contains("submit 1"));
        assertTrue(beta.events.contains("submit 1"));
    }
}
