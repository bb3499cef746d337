package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When the registration ring is full, callers wait for room (bounded), instead of being turned away. */
class BackPressureTest {

    @RegisterExtension
    final Managers managers = new Managers();
    private final StubProvider stub = new StubProvider("stub", 1);

    private RdmaManager manager(int ringSize, Duration queueTimeout) {
        return managers.track(RdmaManager.newBuilder().isolated().providers(List.of(stub))
                .set(RdmaSettings.REGISTRATION_RING_SIZE, ringSize)
                .set(RdmaSettings.REGISTRATION_QUEUE_TIMEOUT, queueTimeout).build());
    }

    @Test
    void registerAndReleaseStormFromFourThreads_onAnEightSlotRing_everyRequestCompletes() throws Exception {
        RdmaManager m = manager(8, Duration.ofSeconds(30));
        int threads = 4;
        int perThread = 25_000;
        MemorySegment memory = managers.arena().allocate((long) threads * perThread * 8);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<List<Long>>> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t * perThread;
                workers.add(pool.submit(() -> {
                    List<CompletableFuture<RdmaRemoteBuffer>> registered = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        registered.add(m.register(memory.asSlice((first + i) * 8L, 8)));
                    }
                    List<Long> ids = new ArrayList<>();
                    List<CompletableFuture<Void>> released = new ArrayList<>();
                    for (CompletableFuture<RdmaRemoteBuffer> f : registered) {
                        long id = f.join().id();
                        ids.add(id);
                        released.add(m.release(id));
                    }
                    released.forEach(CompletableFuture::join);
                    return ids;
                }));
            }

            Set<Long> ids = new HashSet<>();
            for (Future<List<Long>> w : workers) {
                ids.addAll(w.get(120, TimeUnit.SECONDS)); // any RejectedExecutionException fails here
            }

            assertEquals(threads * perThread, ids.size(), "every registration completed with its own id");
            assertEquals(0, m.registeredBufferCount(), "every release completed");
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void register_onAFullRing_waitsAndSucceedsOnceASlotFrees() throws Exception {
        stub.registerGate = new CountDownLatch(1);
        RdmaManager m = manager(2, Duration.ofSeconds(30));
        CompletableFuture<RdmaRemoteBuffer> first = m.register(managers.arena().allocate(8));
        stub.registerEntered.await(10, TimeUnit.SECONDS); // the consumer holds slot 1
        CompletableFuture<RdmaRemoteBuffer> second = m.register(managers.arena().allocate(8)); // slot 2

        CompletableFuture<CompletableFuture<RdmaRemoteBuffer>> third =
                CompletableFuture.supplyAsync(() -> m.register(managers.arena().allocate(8)), OWN_THREAD);
        waitUntilIn("acquireSlot", third);
        stub.registerGate.countDown();

        assertEquals(0, first.get(10, TimeUnit.SECONDS).id());
        assertEquals(1, second.get(10, TimeUnit.SECONDS).id());
        assertEquals(2, third.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS).id());
    }

    @Test
    void release_onAFullRing_waitsAndSucceedsOnceASlotFrees() throws Exception {
        RdmaManager m = manager(2, Duration.ofSeconds(30));
        RdmaRemoteBuffer token = m.register(managers.arena().allocate(8)).join();
        stub.registerEntered = new CountDownLatch(1);
        stub.registerGate = new CountDownLatch(1);
        CompletableFuture<RdmaRemoteBuffer> blocked = m.register(managers.arena().allocate(8));
        stub.registerEntered.await(10, TimeUnit.SECONDS);
        CompletableFuture<RdmaRemoteBuffer> queued = m.register(managers.arena().allocate(8)); // the ring is full

        CompletableFuture<CompletableFuture<Void>> release = CompletableFuture.supplyAsync(() -> m.release(token.id()), OWN_THREAD);
        waitUntilIn("acquireSlot", release);
        stub.registerGate.countDown();

        release.get(10, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
        assertTrue(stub.idsOf("release").contains(token.id()));
        blocked.join();
        queued.join();
    }

    @Test
    void close_wakesCallersWaitingForRoom_withManagerClosed() throws Exception {
        stub.registerGate = new CountDownLatch(1);
        RdmaManager m = manager(2, Duration.ofMinutes(10));
        m.register(managers.arena().allocate(8));
        stub.registerEntered.await(10, TimeUnit.SECONDS);
        m.register(managers.arena().allocate(8));
        CompletableFuture<CompletableFuture<RdmaRemoteBuffer>> waiting =
                CompletableFuture.supplyAsync(() -> m.register(managers.arena().allocate(8)), OWN_THREAD);
        waitUntilIn("acquireSlot", waiting);
        CompletableFuture<Void> closing = CompletableFuture.runAsync(m::close, OWN_THREAD);
        waitUntilIn("closeAsync", closing); // close waits for a slot for its own request

        stub.registerGate.countDown(); // the consumer finishes what it holds, and close gets through

        closing.get(10, TimeUnit.SECONDS);
        CompletionException e = assertThrows(CompletionException.class,
                () -> waiting.get(10, TimeUnit.SECONDS).join(), "the waiting caller does not wait 10 minutes");
        assertInstanceOf(ManagerClosedException.class, e.getCause());
    }

    @Test
    void register_fromTheRegistrationThreadOnAFullRing_failsAtOnceInsteadOfWaitingForItself() throws Exception {
        stub.registerGate = new CountDownLatch(1);
        RdmaManager m = manager(2, Duration.ofMinutes(10));
        AtomicReference<CompletableFuture<RdmaRemoteBuffer>> fromContinuation = new AtomicReference<>();
        CompletableFuture<RdmaRemoteBuffer> first = m.register(managers.arena().allocate(8));
        CompletableFuture<Void> chained = first.thenAccept(t -> fromContinuation.set(m.register(managers.arena().allocate(8))));
        stub.registerEntered.await(10, TimeUnit.SECONDS);
        m.register(managers.arena().allocate(8)); // slot 2: the ring is still full when the continuation runs

        stub.registerGate.countDown();
        chained.get(10, TimeUnit.SECONDS);

        CompletionException e = assertThrows(CompletionException.class, () -> fromContinuation.get().join());
        assertTrue(e.getCause().getMessage().contains("cannot wait for itself"), e.getCause().getMessage());
    }

    @Test
    void build_queueTimeoutNotADuration_failsNamingTheSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(stub)).set("rdma.registration.queueTimeout", "soon").build());

        assertTrue(e.getMessage().contains("rdma.registration.queueTimeout"), e.getMessage());
        assertFalse(e.getMessage().contains("unknown setting"), e.getMessage());
    }

    /** Runs each task on a thread of its own: the common pool may have a single thread here. */
    private static final java.util.concurrent.Executor OWN_THREAD = r -> Thread.ofPlatform().daemon().start(r);

    /**
     * Polls the threads' stacks (with a deadline) until one is inside {@code RegistrationRing.<method>}:
     * the only way to see from outside that a caller is parked waiting for room.
     */
    private static void waitUntilIn(String method, CompletableFuture<?> f) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!isSomeThreadIn(method)) {
            assertFalse(f.isDone(), "finished instead of waiting in " + method + ": " + f);
            assertTrue(System.nanoTime() - end < 0, "no thread reached RegistrationRing." + method);
            Thread.sleep(5);
        }
    }

    private static boolean isSomeThreadIn(String method) {
        return Thread.getAllStackTraces().values().stream().anyMatch(stack -> {
            for (StackTraceElement e : stack) {
                if (e.getClassName().endsWith("RegistrationRing") && e.getMethodName().equals(method)) {
                    return true;
                }
            }
            return false;
        });
    }
}
