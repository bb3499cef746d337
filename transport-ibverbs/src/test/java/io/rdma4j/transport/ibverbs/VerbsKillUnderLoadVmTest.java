package io.rdma4j.transport.ibverbs;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.PeerJvm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults under load: a holder (this JVM, rxe0, two queue pairs per owner, checking quiet owners
 * every 200 ms) reads without pause from two owners on rxe1, one in a JVM of its own and one in this
 * JVM, while it writes 64 MiB to a third, in another JVM; that JVM is killed ({@code kill -9}) mid-transfer. Its ops fail as unreachable, the survivors
 * go on serving the ops submitted after the kill, buffers they allocate after the kill are read
 * and written, and the holder's queue pairs to the dead owner are destroyed: the kernel's own list
 * of the queue pairs on rxe0 ({@code rdma resource show qp}) comes back to exactly the survivors'.
 * Only the public API and the {@code rdma} tool: nothing here counts through the transport's books.
 */
@Tag("softroce")
class VerbsKillUnderLoadVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PEER_ANSWER = Duration.ofSeconds(120);
    private static final HexFormat HEX = HexFormat.of();
    private static final long MIB = 1L << 20;
    private static final String QPS = "2";
    /** Ops each survivor must complete that were submitted after the kill. */
    private static final int OPS_AFTER_KILL = 3;

    @RegisterExtension
    final Managers managers = new Managers();

    @Test
    void ownerJvmKilledMidTransfer_survivorsServeNewOps_andTheHoldersQueuePairsToTheDeadOneAreDestroyed() throws Exception {
        RdmaManager holder = managers.track(RdmaManager.newBuilder().isolated()
                .set("rdma.ibverbs.target", "nic:rxe0")
                .set(VerbsSettings.QPS_PER_PEER.key(), QPS)
                .set(VerbsSettings.PEER_CHECK_INTERVAL.key(), "200ms")
                .build());
        List<CompletableFuture<PeerJvm>> starting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {           // both JVMs start at once: under emulation each takes seconds
            starting.add(CompletableFuture.supplyAsync(VerbsKillUnderLoadVmTest::startOwner));
        }
        RdmaManager inProcessOwner = managers.track(RdmaManager.newBuilder().isolated()
                .set("rdma.ibverbs.target", "nic:rxe1").set(VerbsSettings.QPS_PER_PEER.key(), QPS).build());
        List<PeerJvm> owners = new ArrayList<>();
        try {
            for (CompletableFuture<PeerJvm> s : starting) {
                owners.add(s.join());
            }
            PeerJvm victim = owners.get(1);
            PeerJvm survivorJvm = owners.get(0);
            List<RdmaRemoteBuffer> survivorBuffers = new ArrayList<>();
            survivorBuffers.add(alloc(survivorJvm, 4 * MIB + " " + 40));
            RdmaBuffer inProcess = inProcessOwner.allocate(4 * MIB).join();
            DataPattern.fill(inProcess.segment(), 41);
            survivorBuffers.add(inProcess.remote());
            for (int i = 0; i < survivorBuffers.size(); i++) {
                readEverySlot(holder, survivorBuffers.get(i), 40 + i);
            }
            Set<Long> survivorsQueuePairs = RdmaResources.queuePairs("rxe0");
            RdmaRemoteBuffer victimBuffer = alloc(victim, Long.toString(64 * MIB));
            readEverySlot(holder, victimBuffer.slice(0, 4096), -1);
            Set<Long> withVictim = RdmaResources.queuePairs("rxe0");
            Set<Long> toVictim = new TreeSet<>(withVictim);
            toVictim.removeAll(survivorsQueuePairs);
            assertAll(
                    () -> assertTrue(withVictim.containsAll(survivorsQueuePairs), "the survivors' queue pairs stayed: " + withVictim),
                    () -> assertEquals(Integer.parseInt(QPS), toVictim.size(), "queue pairs to the victim: " + toVictim));

            List<Reader> readers = new ArrayList<>();
            for (int i = 0; i < survivorBuffers.size(); i++) {
                readers.add(new Reader(holder, survivorBuffers.get(i).slice(0, MIB / 4), 40 + i,
                        managers.arena().allocate(MIB / 4, 64)));
            }
            try {
                for (Reader r : readers) {
                    r.awaitCompleted(2, Long.MIN_VALUE);
                }
                MemorySegment toDead = DataPattern.fill(managers.arena().allocate(64 * MIB, 64), 44);
                CompletableFuture<Void> doomed = holder.newAction().requireTransport(VerbsTransportProvider.NAME)
                        .writeFrom(victimBuffer, toDead).submit(TIMEOUT);
                assertFalse(doomed.isDone(), "64 MiB written before the kill: too small to be killed mid-way");
                long killedAt = System.nanoTime();

                victim.process().destroyForcibly();       // SIGKILL

                CompletionException e = assertThrows(CompletionException.class, doomed::join);
                Throwable cause = assertInstanceOf(RdmaSubmitException.class, e.getCause()).getCause();
                assertInstanceOf(PeerUnreachableException.class, cause, () -> String.valueOf(cause));
                for (Reader r : readers) {
                    r.awaitCompleted(OPS_AFTER_KILL, killedAt);
                }
                // buffers made after the kill, by each survivor: new tokens, checked anew
                RdmaRemoteBuffer freshInJvm = alloc(survivorJvm, Long.toString(MIB));
                RdmaBuffer freshInProcess = inProcessOwner.allocate(MIB).join();
                List<RdmaRemoteBuffer> fresh = List.of(freshInJvm, freshInProcess.remote());
                for (int i = 0; i < fresh.size(); i++) {
                    MemorySegment out = DataPattern.fill(managers.arena().allocate(MIB, 64), 50 + i);
                    MemorySegment back = managers.arena().allocate(MIB, 64);
                    holder.newAction().requireTransport(VerbsTransportProvider.NAME).writeFrom(fresh.get(i), out)
                            .submit(TIMEOUT).join();
                    holder.newAction().requireTransport(VerbsTransportProvider.NAME).readInto(fresh.get(i), back)
                            .submit(TIMEOUT).join();
                    assertEquals(-1, DataPattern.mismatch(back, 50 + i), "read back from fresh buffer " + i);
                }
                assertEquals("MISMATCH -1", survivorJvm.command("mismatch " + freshInJvm.id() + " 50"));
                assertEquals(-1, DataPattern.mismatch(freshInProcess.segment(), 51));
            } finally {
                for (Reader r : readers) {
                    r.stop();
                }
            }
            for (Reader r : readers) {
                assertEquals(List.of(), r.failures, "ops to a survivor that failed");
            }
            Set<Long> now = awaitQueuePairs(survivorsQueuePairs);
            assertEquals(survivorsQueuePairs, now, "queue pairs on rxe0 once the dead owner's were destroyed");
        } finally {
            for (PeerJvm o : owners) {
                o.close();
            }
        }
    }

    /** A holder thread reading one survivor's buffer without pause, every read checked. */
    private static final class Reader {
        final List<String> failures = new CopyOnWriteArrayList<>();
        /** Submission times (nanoTime) of the completed, checked reads, in order. */
        private final List<Long> completed = new CopyOnWriteArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicLong reads = new AtomicLong();
        private final Thread thread;

        Reader(RdmaManager holder, RdmaRemoteBuffer remote, long seed, MemorySegment local) {
            thread = Thread.ofPlatform().name("kill-test-reader-" + remote.id()).start(() -> {
                while (!stop.get() && failures.isEmpty()) {
                    long submitted = System.nanoTime();
                    RdmaAction action = holder.newAction().requireTransport(VerbsTransportProvider.NAME);
                    long quarter = remote.size() / 4;
                    for (int q = 0; q < 4; q++) {
                        action.readInto(remote.slice(q * quarter, quarter), local.asSlice(q * quarter, quarter));
                    }
                    local.fill((byte) 0);
                    try {
                        action.submit(TIMEOUT).join();
                        long bad = DataPattern.mismatch(local, seed);
                        if (bad >= 0) {
                            failures.add("read " + reads.get() + " differs at " + bad);
                        }
                        completed.add(submitted);
                        reads.incrementAndGet();
                    } catch (RuntimeException e) {
                        failures.add("read " + reads.get() + ": " + (e.getCause() != null ? e.getCause() : e));
                    }
                }
            });
        }

        /** Waits until {@code n} reads submitted after {@code since} completed (or one failed), bounded. */
        void awaitCompleted(int n, long since) throws InterruptedException {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (completed.stream().filter(t -> t - since > 0 || since == Long.MIN_VALUE).count() < n) {
                assertEquals(List.of(), failures, "reads of " + thread.getName());
                assertTrue(System.nanoTime() < deadline, thread.getName() + " completed only "
                        + completed.size() + " reads in all within " + TIMEOUT);
                Thread.sleep(10);
            }
        }

        void stop() throws InterruptedException {
            stop.set(true);
            thread.join(TIMEOUT.toMillis() * 2);
        }
    }

    /**
     * Polls the queue pairs on rxe0 until they are {@code expected}, for at most {@link #TIMEOUT}:
     * the holder destroys the dead owner's queue pairs when their ops fail or its liveness sweep
     * finds the owner gone, on their own time. Returns the last list seen.
     */
    private static Set<Long> awaitQueuePairs(Set<Long> expected) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        Set<Long> now = RdmaResources.queuePairs("rxe0");
        while (!now.equals(expected) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            now = RdmaResources.queuePairs("rxe0");
        }
        return now;
    }

    private static PeerJvm startOwner() {
        try {
            return PeerJvm.start(VerbsPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"), PEER_ANSWER,
                    "rdma.ibverbs.target=nic:rxe1", VerbsSettings.QPS_PER_PEER.key() + "=" + QPS);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static RdmaRemoteBuffer alloc(PeerJvm owner, String arguments) throws IOException, InterruptedException {
        String answer = owner.command("alloc " + arguments);
        assertTrue(answer.startsWith("TOKEN "), answer);
        return RdmaRemoteBuffer.fromBytes(HEX.parseHex(answer.substring(6)));
    }

    /** Four small reads of {@code remote} (pattern {@code seed}, or unchecked when negative): small ops take turns, so every slot once. */
    private void readEverySlot(RdmaManager holder, RdmaRemoteBuffer remote, long seed) {
        MemorySegment local = managers.arena().allocate(4096);
        for (int i = 0; i < 4; i++) {
            holder.newAction().requireTransport(VerbsTransportProvider.NAME).readInto(remote.slice(0, 4096), local)
                    .submit(TIMEOUT).join();
        }
        if (seed >= 0) {
            assertEquals(-1, DataPattern.mismatch(local, seed));
        }
    }
}
