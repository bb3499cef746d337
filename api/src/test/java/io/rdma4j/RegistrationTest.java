package io.rdma4j;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.LocalBuffer;
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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RegistrationTest {

    private final StubProvider fast = new StubProvider("fast", 200);
    private final StubProvider slow = new StubProvider("slow", 100);
    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    private RdmaManager manager(StubProvider... providers) {
        return managers.start(providers);
    }

    @Test
    void register_returnsTokenCarryingEveryTransportInPriorityOrder() {
        RdmaManager m = manager(slow, fast);

        RdmaRemoteBuffer token = m.register(arena.allocate(4096)).join();

        assertEquals(List.of("fast", "slow"), List.copyOf(token.transports()));
        assertEquals(4096, token.size());
        assertEquals(m.controlEndpoint(), token.owner());
        assertEquals(m.incarnation(), token.ownerIncarnation());
    }

    @Test
    void register_heapSegment_rejectedWithClearError() {
        RdmaManager m = manager(fast);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> m.register(MemorySegment.ofArray(new byte[16])));

        assertTrue(e.getMessage().contains("heap"), e.getMessage());
        assertTrue(fast.idsOf("register").isEmpty());
    }

    @Test
    void register_zeroLengthSegment_rejected() {
        RdmaManager m = manager(fast);

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.register(arena.allocate(0)));

        assertTrue(e.getMessage().contains("zero-length"), e.getMessage());
    }

    @Test
    void register_segmentOfClosedArena_rejected() {
        RdmaManager m = manager(fast);
        Arena closed = Arena.ofConfined();
        MemorySegment s = closed.allocate(64);
        closed.close();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.register(s));

        assertTrue(e.getMessage().contains("arena is closed"), e.getMessage());
    }

    @Test
    void register_threadConfinedSegment_rejected() {
        RdmaManager m = manager(fast);

        try (Arena confined = Arena.ofConfined()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> m.register(confined.allocate(64)));

            assertTrue(e.getMessage().contains("thread-confined"), e.getMessage());
        }
    }

    @Test
    void register_ofAReadOnlySegment_returnsATokenThatSaysReadOnly_andTheOwnerSeesAReadOnlyRegistration() {
        RdmaManager m = manager(fast);

        RdmaRemoteBuffer token = m.register(arena.allocate(64).asReadOnly()).join();
        LocalBuffer served = fast.context.registrations().lookup(token.incarnationBytes(), token.id(), token.accessKey(), 0, 64);

        assertTrue(token.isReadOnly());
        assertTrue(token.slice(8, 8).isReadOnly(), "a slice keeps the flag");
        assertTrue(RdmaRemoteBuffer.fromBytes(token.toBytes()).isReadOnly(), "the flag crosses the wire");
        assertTrue(served.readOnly());
        assertTrue(served.segment().isReadOnly(), "the transports get the read-only segment");
    }

    @Test
    void register_ofAWritableSegment_andAllocate_returnWritableTokens() {
        RdmaManager m = manager(fast);

        RdmaRemoteBuffer registered = m.register(arena.allocate(64)).join();
        RdmaBuffer allocated = m.allocate(64).join();

        assertFalse(registered.isReadOnly());
        assertFalse(allocated.remote().isReadOnly());
        assertFalse(fast.context.registrations().lookup(registered.incarnationBytes(), registered.id(),
                registered.accessKey(), 0, 64).readOnly());
    }

    @Test
    void register_laterTransportFails_rollsBackEarlierOnesAndKeepsTheOriginalCause() {
        IllegalStateException boom = new IllegalStateException("ibv_reg_mr failed: errno 12");
        slow.registerFailure = id -> boom;
        RdmaManager m = manager(fast, slow);

        CompletionException e = assertThrows(CompletionException.class, () -> m.register(arena.allocate(64)).join());

        RegistrationException re = assertInstanceOf(RegistrationException.class, e.getCause());
        assertSame(boom, re.getCause());
        assertEquals("slow", re.transport());
        assertEquals(List.of(0L), fast.idsOf("release"));   // the one that had succeeded
        assertTrue(slow.idsOf("release").isEmpty());        // not the failing one
        assertEquals(0, m.registeredBufferCount());
    }

    @Test
    void register_idsAreNeverReused_evenAfterAFailedRegistration() {
        fast.registerFailure = id -> id == 1 ? new IllegalStateException("no") : null;
        RdmaManager m = manager(fast);

        long first = m.register(arena.allocate(8)).join().id();
        assertThrows(CompletionException.class, () -> m.register(arena.allocate(8)).join());
        m.release(first).join();
        long third = m.register(arena.allocate(8)).join().id();

        assertEquals(0, first);
        assertEquals(2, third);
    }

    @Test
    void register_eachRegistrationGetsItsOwnRandomAccessKey() {
        RdmaManager m = manager(fast);

        RdmaRemoteBuffer a = m.register(arena.allocate(8)).join();
        RdmaRemoteBuffer b = m.register(arena.allocate(8)).join();

        assertFalse(java.util.Arrays.equals(a.accessKey(), b.accessKey()));
        assertNotEquals(0, java.util.Arrays.hashCode(a.accessKey()));
    }

    @Test
    void register_concurrentlyFromManyThreads_yieldsUniqueIds() throws Exception {
        RdmaManager m = manager(fast);
        int threads = 8;
        int perThread = 100;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<Long>>> results = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            results.add(pool.submit(() -> {
                start.await();
                List<CompletableFuture<RdmaRemoteBuffer>> mine = new ArrayList<>();
                for (int i = 0; i < perThread; i++) {
                    mine.add(m.register(arena.allocate(16)));
                }
                return mine.stream().map(f -> f.join().id()).toList();
            }));
        }
        start.countDown();
        Set<Long> ids = new HashSet<>();
        for (Future<List<Long>> f : results) {
            ids.addAll(f.get(60, TimeUnit.SECONDS));
        }
        pool.shutdown();

        assertEquals(threads * perThread, ids.size());
        assertEquals(threads * perThread, m.registeredBufferCount());
    }

    @Test
    void register_returnsBeforeASlowTransportFinishes() throws Exception {
        fast.registerGate = new CountDownLatch(1);
        RdmaManager m = manager(fast);

        CompletableFuture<RdmaRemoteBuffer> f = m.register(arena.allocate(8));
        fast.registerEntered.await(10, TimeUnit.SECONDS);

        assertFalse(f.isDone());
        fast.registerGate.countDown();
        assertEquals(0, f.get(10, TimeUnit.SECONDS).id());
    }

    @Test
    void register_ringFullForLongerThanTheQueueTimeout_failsWithClearTimeoutAndLosesNothingQueued() throws Exception {
        fast.registerGate = new CountDownLatch(1);
        RdmaManager m = RdmaManager.newBuilder().isolated().providers(List.of(fast))
                .set(RdmaSettings.REGISTRATION_RING_SIZE, 2)
                .set(RdmaSettings.REGISTRATION_QUEUE_TIMEOUT, Duration.ofMillis(200)).build();
        managers.track(m);
        CompletableFuture<RdmaRemoteBuffer> first = m.register(arena.allocate(8));
        fast.registerEntered.await(10, TimeUnit.SECONDS);     // the consumer holds slot 1
        CompletableFuture<RdmaRemoteBuffer> second = m.register(arena.allocate(8)); // slot 2

        CompletableFuture<RdmaRemoteBuffer> third = m.register(arena.allocate(8)); // waits 200 ms for room

        CompletionException e = assertThrows(CompletionException.class, third::join);
        assertInstanceOf(RdmaTimeoutException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("registration queue full"), e.getCause().getMessage());
        assertTrue(e.getCause().getMessage().contains("rdma.registration.queueTimeout"), e.getCause().getMessage());
        fast.registerGate.countDown();
        assertEquals(0, first.get(10, TimeUnit.SECONDS).id());
        assertEquals(1, second.get(10, TimeUnit.SECONDS).id());
    }

    @Test
    void allocatedBufferClose_whileTheRingIsFull_waitsForRoomInsteadOfLosingTheRelease() throws Exception {
        RdmaManager m = managers.track(RdmaManager.newBuilder().isolated().providers(List.of(fast))
                .set(RdmaSettings.REGISTRATION_RING_SIZE, 2).build());
        RdmaBuffer buffer = m.allocate(64).join();
        fast.registerEntered = new CountDownLatch(1);
        fast.registerGate = new CountDownLatch(1);
        CompletableFuture<RdmaRemoteBuffer> blocked = m.register(arena.allocate(8));
        fast.registerEntered.await(10, TimeUnit.SECONDS);
        CompletableFuture<RdmaRemoteBuffer> queued = m.register(arena.allocate(8)); // the ring is now full

        CompletableFuture<Void> closing = CompletableFuture.runAsync(buffer::close); // its release finds no room
        fast.registerGate.countDown();
        closing.get(10, TimeUnit.SECONDS);

        assertTrue(fast.idsOf("release").contains(buffer.id()));
        assertFalse(buffer.segment().scope().isAlive());
        blocked.join();
        queued.join();
    }

    @Test
    void register_afterClose_failsWithManagerClosed() {
        RdmaManager m = manager(fast);
        m.close();

        CompletionException e = assertThrows(CompletionException.class, () -> m.register(arena.allocate(8)).join());

        assertInstanceOf(ManagerClosedException.class, e.getCause());
    }

    @Test
    void allocate_returnsOwnedPageAlignedRegisteredBuffer() {
        RdmaManager m = manager(fast);

        try (RdmaBuffer b = m.allocate(10_000).join()) {
            assertEquals(10_000, b.byteSize());
            assertEquals(0, b.segment().address() % 4096);
            assertEquals(10_000, b.remote().size());
            assertEquals(1, m.registeredBufferCount());
        }
        assertEquals(0, m.registeredBufferCount());
    }

    @Test
    void allocate_nonPositiveSize_rejected() {
        RdmaManager m = manager(fast);

        assertThrows(IllegalArgumentException.class, () -> m.allocate(0));
    }

    @Test
    void allocate_close_freesMemoryOnlyAfterEveryTransportReleasedIt() {
        RdmaManager m = manager(fast, slow);
        RdmaBuffer b = m.allocate(64).join();

        b.close();

        assertEquals(Boolean.TRUE, fast.aliveAtRelease.get(b.id()));
        assertEquals(Boolean.TRUE, slow.aliveAtRelease.get(b.id()));
        assertFalse(b.segment().scope().isAlive());
    }

    @Test
    void allocate_memoryPinnedByARemoteAccess_isFreedWhenThePinCloses() {
        RdmaManager m = manager(fast);
        RdmaBuffer b = m.allocate(64).join();
        LocalBuffer served = fast.context.registrations().lookup(b.remote().incarnationBytes(), b.id(), b.remote().accessKey(), 0, 64);
        LocalBuffer.Pin pin = served.pin();

        b.close();
        assertTrue(b.segment().scope().isAlive());
        pin.close();

        assertFalse(b.segment().scope().isAlive());
    }

    @Test
    void allocate_closeTwice_releasesOnce() {
        RdmaManager m = manager(fast);
        RdmaBuffer b = m.allocate(64).join();

        b.close();
        b.close();

        assertEquals(List.of(b.id()), fast.idsOf("release"));
    }

    @Test
    void lookup_wrongKey_refusedAsDenied() {
        RdmaManager m = manager(fast);
        RdmaRemoteBuffer t = m.register(arena.allocate(8)).join();
        byte[] key = t.accessKey();
        key[0] ^= 1;

        BufferAccessException e = assertThrows(BufferAccessException.class,
                () -> fast.context.registrations().lookup(t.incarnationBytes(), t.id(), key, 0, 8));

        assertEquals(BufferAccessException.Reason.DENIED, e.reason());
        assertEquals("access to buffer " + t.id() + " denied: no such buffer, released, or wrong access key", e.getMessage());
    }

    @Test
    void lookup_neverIssuedId_refusedExactlyLikeAWrongKey() {
        RdmaManager m = manager(fast);

        BufferAccessException e = assertThrows(BufferAccessException.class,
                () -> fast.context.registrations().lookup(fast.context.incarnation(), 42, new byte[16], 0, 1));

        assertEquals(BufferAccessException.Reason.DENIED, e.reason());
        assertEquals("access to buffer 42 denied: no such buffer, released, or wrong access key", e.getMessage());
        assertEquals(0, m.registeredBufferCount());
    }

    @Test
    void pin_callerClosedTheArenaWithoutReleasing_refusedAsClosedNotACrash() {
        RdmaManager m = manager(fast);
        Arena own = Arena.ofShared();
        RdmaRemoteBuffer t = m.register(own.allocate(64)).join();
        LocalBuffer served = fast.context.registrations().lookup(t.incarnationBytes(), t.id(), t.accessKey(), 0, 64);
        own.close();

        BufferAccessException e = assertThrows(BufferAccessException.class, served::pin);

        assertEquals(BufferAccessException.Reason.CLOSED, e.reason());
    }

    @Test
    void tokenAccessKey_isNotShownByToString() {
        RdmaManager m = manager(fast);
        RdmaRemoteBuffer t = m.register(arena.allocate(8)).join();

        String hex = java.util.HexFormat.of().formatHex(t.accessKey());

        assertFalse(t.toString().contains(hex));
        assertArrayEquals(t.accessKey(), RdmaRemoteBuffer.fromBytes(t.toBytes()).accessKey());
    }
}
