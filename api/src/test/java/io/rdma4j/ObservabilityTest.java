package io.rdma4j;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.TransportOp.OpType;
import io.rdma4j.testing.LogCapture;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletionException;
import java.util.logging.Level;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a manager lets its user see: discovered transports, counters, the route chosen per peer. */
class ObservabilityTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    @RegisterExtension
    final LogCapture logs = new LogCapture();
    private final Arena arena = managers.arena();

    @Test
    void transportInfo_listsEveryDiscoveredTransportWithAvailabilityReasonAndWhetherItOpened() {
        StubProvider absent = new StubProvider("absent", 300);
        absent.availability = Availability.unavailable("no hardware");
        StubProvider broken = new StubProvider("broken", 200);
        broken.openFailure = new IllegalStateException("device busy");
        RdmaManager m = managers.start(absent, broken, new StubProvider("ok", 100));

        assertEquals(List.of(
                new TransportInfo("absent", 300, false, false, "no hardware"),
                new TransportInfo("broken", 200, true, false, "device busy"),
                new TransportInfo("ok", 100, true, true, "")), m.transportInfo());
    }

    @Test
    void stats_countOpsBytesAndLatencyPerTransportAndOpType() {
        RdmaManager m = managers.start(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(64)).join();

        m.newAction().writeFrom(remote, arena.allocate(16)).writeFrom(remote, arena.allocate(8)).submit(TIMEOUT).join();
        m.read(remote, arena.allocate(64), TIMEOUT).join();
        m.newAction().readInto(remote, arena.allocate(64)).submitAndWait(TIMEOUT);

        List<RdmaStats.OpStats> ops = m.stats().ops();
        assertEquals(2, ops.size(), ops.toString());
        RdmaStats.OpStats reads = ops.get(0);
        RdmaStats.OpStats writes = ops.get(1);
        assertEquals(List.of("stub", OpType.READ_INTO_LOCAL, 2L, 128L, 0L, 2L),
                List.of(reads.transport(), reads.type(), reads.ops(), reads.bytes(), reads.errors(), reads.groups()));
        assertEquals(List.of("stub", OpType.WRITE_FROM_LOCAL, 2L, 24L, 0L, 1L),
                List.of(writes.transport(), writes.type(), writes.ops(), writes.bytes(), writes.errors(), writes.groups()));
        assertTrue(reads.maxLatency().compareTo(reads.meanLatency()) >= 0, reads.toString());
        assertTrue(reads.meanLatency().isPositive(), reads.toString());
    }

    @Test
    void stats_fromManyThreadsAtOnce_countEveryOpOnce_whileSnapshotsAreTaken() throws Exception {
        RdmaManager m = managers.start(new StubProvider("stub", 1));
        RdmaRemoteBuffer remote = m.register(arena.allocate(8)).join();
        int threads = 8;
        int perThread = 2_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                RdmaAction read = m.newAction().readInto(remote, arena.allocate(8));
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < perThread; i++) {
                    read.submitAndWait(TIMEOUT);
                }
            }));
        }
        start.countDown();
        long lastOps = 0;
        while (workers.stream().anyMatch(Thread::isAlive)) {
            List<RdmaStats.OpStats> seen = m.stats().ops();
            long ops = seen.isEmpty() ? 0 : seen.getFirst().ops();
            assertTrue(ops >= lastOps, "the count went back from " + lastOps + " to " + ops);
            lastOps = ops;
        }
        for (Thread w : workers) {
            w.join();
        }

        RdmaStats.OpStats reads = m.stats().ops().getFirst();
        long total = (long) threads * perThread;
        assertEquals(List.of(total, 8 * total, 0L, total), List.of(reads.ops(), reads.bytes(), reads.errors(), reads.groups()));
    }

    @Test
    void stats_countTheOpsOfAFailedGroupAsErrors() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager m = managers.start(stub);
        RdmaRemoteBuffer remote = m.register(arena.allocate(32)).join();
        stub.submitMode = StubProvider.SubmitMode.FAIL;

        assertThrows(CompletionException.class, () -> m.read(remote, arena.allocate(32), TIMEOUT).join());

        RdmaStats.OpStats reads = m.stats().ops().getFirst();
        assertEquals(List.of(1L, 32L, 1L), List.of(reads.ops(), reads.bytes(), reads.errors()));
    }

    @Test
    void stats_countRegistrationsFailuresAndReleases() {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager m = managers.start(stub);
        RdmaRemoteBuffer kept = m.register(arena.allocate(16)).join();
        RdmaRemoteBuffer released = m.register(arena.allocate(16)).join();
        m.release(released.id()).join();
        m.release(released.id()).join(); // already released: not counted again
        stub.registerFailure = id -> new IllegalStateException("refused");
        assertThrows(CompletionException.class, () -> m.register(arena.allocate(16)).join());

        RdmaStats s = m.stats();

        assertEquals(List.of(2L, 1L, 1L, 1), List.of(s.registrations(), s.registrationFailures(), s.releases(),
                s.registeredBuffers()), s.toString());
        assertTrue(kept.id() != released.id());
    }

    @Test
    void stats_ringPending_countsRequestsQueuedBehindABlockedRegistration() throws InterruptedException {
        StubProvider stub = new StubProvider("stub", 1);
        RdmaManager m = managers.track(RdmaManager.newBuilder().isolated().providers(List.of(stub))
                .set(RdmaSettings.REGISTRATION_RING_SIZE, 8).build());
        CountDownLatch gate = new CountDownLatch(1);
        stub.registerGate = gate;
        List<CompletableFuture<RdmaRemoteBuffer>> queued = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            queued.add(m.register(arena.allocate(16)));
        }
        assertTrue(stub.registerEntered.await(10, TimeUnit.SECONDS));

        RdmaStats s = m.stats();
        gate.countDown();
        queued.forEach(CompletableFuture::join);

        assertEquals(List.of(3, 8), List.of(s.ringPending(), s.ringCapacity()));
    }

    @Test
    void route_loggedOnceAtInfoPerPeer_namingTheTransportAndWhyNotTheOthers() {
        StubProvider absent = new StubProvider("absent", 300);
        absent.availability = Availability.unavailable("no hardware");
        RdmaManager owner = managers.start(new StubProvider("fast", 200), new StubProvider("slow", 100));
        RdmaManager holder = managers.start(absent, new StubProvider("slow", 100), new StubProvider("other", 50));
        RdmaRemoteBuffer a = owner.register(arena.allocate(16)).join();
        RdmaRemoteBuffer b = owner.register(arena.allocate(16)).join();

        holder.read(a, arena.allocate(16), TIMEOUT).join();
        holder.read(b, arena.allocate(16), TIMEOUT).join();
        holder.read(a, arena.allocate(16), TIMEOUT).join();

        List<String> routes = logs.messages(Level.INFO).stream().filter(l -> l.startsWith("peer ")).toList();
        assertEquals(List.of("peer " + owner.controlEndpoint() + " is served by slow; not by: absent (not available "
                + "here: no hardware), other (the peer does not offer it), fast (the peer offers it; this process does "
                + "not have it)"), routes);
    }
}
