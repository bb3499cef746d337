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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** No silent slow path: a manager or an action can insist on transports, and fails at once without them. */
class RequiredTransportsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    private RdmaManager start(RdmaManagerBuilder b, StubProvider... providers) {
        return managers.track(b.isolated().providers(List.of(providers)).build());
    }

    @Test
    void build_requireTransports_opensOnlyThoseAndReportsTheOthersAsNotAllowed() {
        RdmaManager m = start(RdmaManager.newBuilder().requireTransports("slow"),
                new StubProvider("fast", 200), new StubProvider("slow", 100));

        assertEquals(List.of("slow"), m.transports());
        assertEquals(new TransportInfo("fast", 200, false, false, "not among requireTransports [slow]"),
                m.transportInfo().getFirst());
    }

    @Test
    void build_excludeTransports_leavesThemClosed() {
        RdmaManager m = start(RdmaManager.newBuilder().excludeTransports("slow"),
                new StubProvider("fast", 200), new StubProvider("slow", 100));

        assertEquals(List.of("fast"), m.transports());
        assertEquals(new TransportInfo("slow", 100, false, false, "excluded by excludeTransports"), m.transportInfo().get(1));
    }

    @Test
    void build_requiredTransportNotFound_failsNamingWhatWasFound() {
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class, () -> start(
                RdmaManager.newBuilder().requireTransports("ibverbs"), new StubProvider("tcp", 100)));

        assertEquals("no RDMA transport allowed: found [tcp], but requireTransports allows only [ibverbs]", e.getMessage());
    }

    @Test
    void requireTransports_noName_rejected() {
        assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().requireTransports());
    }

    @Test
    void read_tokenOffersOnlyAnExcludedTransport_failsAtOnceNamingWhatEachSideOffers() {
        StubProvider holderSlow = new StubProvider("slow", 100);
        RdmaManager owner = managers.start(new StubProvider("fast", 200));
        RdmaManager holder = start(RdmaManager.newBuilder().excludeTransports("fast"), new StubProvider("fast", 200),
                holderSlow);
        RdmaRemoteBuffer remote = owner.register(arena.allocate(16)).join();

        CompletableFuture<Void> read = holder.read(remote, arena.allocate(16), TIMEOUT);

        assertTrue(read.isCompletedExceptionally());
        NoCompatibleTransportException e = assertThrows(NoCompatibleTransportException.class,
                () -> { throw read.exceptionNow(); });
        assertTrue(e.getMessage().contains("this manager runs [slow], the token offers [fast]"), e.getMessage());
        assertTrue(holderSlow.events.stream().noneMatch(ev -> ev.startsWith("submit")), holderSlow.events.toString());
    }

    @Test
    void submit_requiredTransportTheTokenLacks_failsAtOnceNamingWhatEachSideOffersAndTheRequirement() {
        RdmaManager owner = managers.start(new StubProvider("fast", 200));
        RdmaManager holder = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer remote = owner.register(arena.allocate(16)).join();

        CompletableFuture<Void> f = holder.newAction().requireTransport("slow").readInto(remote, arena.allocate(16))
                .submit(TIMEOUT);

        assertTrue(f.isCompletedExceptionally());
        Throwable e = f.exceptionNow();
        assertTrue(e instanceof NoCompatibleTransportException, e.toString());
        assertTrue(e.getMessage().contains("this manager runs [fast, slow], the token offers [fast], the action requires "
                + "[slow]"), e.getMessage());
        assertEquals(List.of(), holder.stats().ops());
    }

    @Test
    void submitAndWait_requiredTransportTheTokenLacks_throwsBeforeSending() {
        RdmaManager owner = managers.start(new StubProvider("fast", 200));
        RdmaManager holder = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer remote = owner.register(arena.allocate(16)).join();

        assertThrows(NoCompatibleTransportException.class, () -> holder.newAction().requireTransport("slow")
                .readInto(remote, arena.allocate(16)).submitAndWait(TIMEOUT));
    }

    @Test
    void submit_requiredTransport_carriesTheOpsEvenWhenAFasterOneIsShared() {
        RdmaManager owner = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaManager holder = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaRemoteBuffer remote = owner.register(arena.allocate(16)).join();
        holder.read(remote, arena.allocate(16), TIMEOUT).join(); // caches the route over fast

        holder.newAction().requireTransport("slow").readInto(remote, arena.allocate(16)).submit(TIMEOUT).join();

        assertEquals(List.of("fast", "slow"), holder.stats().ops().stream().map(RdmaStats.OpStats::transport).toList());
    }
}
