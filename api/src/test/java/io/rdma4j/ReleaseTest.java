package io.rdma4j;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReleaseTest {

    private final StubProvider fast = new StubProvider("fast", 200);
    private final StubProvider slow = new StubProvider("slow", 100);
    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    private RdmaManager manager(StubProvider... providers) {
        return managers.start(providers);
    }

    @Test
    void release_releasesOnEveryTransport_andLookupsThenAreDeniedLikeAnUnknownId() {
        RdmaManager m = manager(fast, slow);
        RdmaRemoteBuffer t = m.register(arena.allocate(8)).join();

        m.release(t.id()).join();

        assertEquals(List.of(t.id()), fast.idsOf("release"));
        assertEquals(List.of(t.id()), slow.idsOf("release"));
        BufferAccessException e = assertThrows(BufferAccessException.class,
                () -> fast.context.registrations().lookup(t.incarnationBytes(), t.id(), t.accessKey(), 0, 8));
        assertEquals(BufferAccessException.Reason.DENIED, e.reason());
        assertEquals("access to buffer " + t.id() + " denied: no such buffer, released, or wrong access key", e.getMessage());
    }

    @Test
    void release_twice_isIdempotent() {
        RdmaManager m = manager(fast);
        long id = m.register(arena.allocate(8)).join().id();

        m.release(id).join();
        m.release(id).join();

        assertEquals(List.of(id), fast.idsOf("release"));
    }

    @Test
    void release_unknownId_succeedsWithoutTouchingTransports() {
        RdmaManager m = manager(fast);

        m.release(12345).join();

        assertTrue(fast.idsOf("release").isEmpty());
    }

    @Test
    void release_failingOnSeveralTransports_aggregatesEveryErrorButStillReleasesEverywhere() {
        fast.releaseFailure = new IllegalStateException("ibv_dereg_mr failed");
        slow.releaseFailure = new IllegalStateException("socket gone");
        StubProvider third = new StubProvider("third", 50);
        RdmaManager m = manager(fast, slow, third);
        long id = m.register(arena.allocate(8)).join().id();

        CompletionException e = assertThrows(CompletionException.class, () -> m.release(id).join());

        RdmaReleaseException re = assertInstanceOf(RdmaReleaseException.class, e.getCause());
        assertEquals("RDMA release failed on 2 transport(s):\n(fast) ibv_dereg_mr failed\n(slow) socket gone", re.getMessage());
        assertEquals(List.of("fast", "slow"), List.copyOf(re.failures().keySet()));
        assertEquals(List.of(id), third.idsOf("release"));
        assertEquals(0, m.registeredBufferCount());
    }

    @Test
    void releaseByToken_fromAnotherManager_reachesTheOwnerOverItsControlEndpoint() {
        RdmaManager owner = manager(fast);
        RdmaManager holder = manager(new StubProvider("fast", 200));
        RdmaRemoteBuffer t = owner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer received = RdmaRemoteBuffer.fromBytes(t.toBytes());

        holder.release(received).join();

        assertEquals(List.of(t.id()), fast.idsOf("release"));
        assertEquals(0, owner.registeredBufferCount());
    }

    @Test
    void releaseByToken_fromAnotherManager_twice_secondIsRefusedLikeAnUnknownBuffer() {
        RdmaManager owner = manager(fast);
        RdmaManager holder = manager(new StubProvider("fast", 200));
        RdmaRemoteBuffer t = owner.register(arena.allocate(8)).join();
        holder.release(t).join();

        CompletionException again = assertThrows(CompletionException.class, () -> holder.release(t).join());

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, again.getCause());
        assertTrue(e.getMessage().endsWith("access to buffer " + t.id()
                + " denied: no such buffer, released, or wrong access key"), e.getMessage());
        assertEquals(List.of(t.id()), fast.idsOf("release"));
    }

    @Test
    void releaseByToken_withWrongAccessKey_isRefusedAndTheBufferStays() {
        RdmaManager owner = manager(fast);
        RdmaManager holder = manager(new StubProvider("fast", 200));
        RdmaRemoteBuffer t = owner.register(arena.allocate(8)).join();
        RdmaRemoteBuffer forged = Tokens.withFlippedKeyByte(t);

        CompletionException e = assertThrows(CompletionException.class, () -> holder.release(forged).join());

        assertInstanceOf(RemoteAccessException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("wrong access key"), e.getCause().getMessage());
        assertEquals(1, owner.registeredBufferCount());
    }

    @Test
    void releaseByToken_localOwnerWithWrongAccessKey_isRefused() {
        RdmaManager owner = manager(fast);
        RdmaRemoteBuffer forged = Tokens.withFlippedKeyByte(owner.register(arena.allocate(8)).join());

        CompletionException e = assertThrows(CompletionException.class, () -> owner.release(forged).join());

        assertInstanceOf(RemoteAccessException.class, e.getCause());
        assertEquals(1, owner.registeredBufferCount());
    }

    @Test
    void releaseByToken_ownerGone_failsAsUnreachableWithinDeadline() {
        RdmaManager owner = manager(fast);
        RdmaManager holder = manager(new StubProvider("fast", 200));
        RdmaRemoteBuffer t = owner.register(arena.allocate(8)).join();
        owner.close();

        CompletionException e = assertThrows(CompletionException.class,
                () -> holder.release(t, Duration.ofSeconds(5)).join());

        assertInstanceOf(PeerUnreachableException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains(t.owner().toString()), e.getCause().getMessage());
    }

    @Test
    void close_withRegistrationsOutstanding_releasesEveryOneAndFreesOwnedMemory() {
        RdmaManager m = manager(fast, slow);
        long a = m.register(arena.allocate(8)).join().id();
        RdmaBuffer owned = m.allocate(64).join();

        m.close();

        assertEquals(List.of(a, owned.id()), fast.idsOf("release").stream().sorted().toList());
        assertEquals(List.of(a, owned.id()), slow.idsOf("release").stream().sorted().toList());
        assertFalse(owned.segment().scope().isAlive());
        assertEquals(0, m.registeredBufferCount());
        owned.close(); // after the manager closed: a no-op, not an error
    }

    @Test
    void release_afterClose_succeeds() {
        RdmaManager m = manager(fast);
        long id = m.register(arena.allocate(8)).join().id();
        m.close();

        m.release(id).join();

        assertEquals(List.of(id), fast.idsOf("release"));
    }
}
