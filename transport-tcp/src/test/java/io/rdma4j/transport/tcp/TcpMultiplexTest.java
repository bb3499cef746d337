package io.rdma4j.transport.tcp;

import io.rdma4j.testing.Signals;
import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import static io.rdma4j.transport.tcp.TcpTesting.SAFETY;
import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Concurrent actions of small ops to one peer share one connection (plus the pooled one of a run
 * that started alone): a round waits for its own replies only, and the contract holds on the shared
 * connection: each action moves its own bytes, a cancelled or timed-out action's memory is left
 * alone though its replies still arrive, a dead peer fails every action on it.
 */
class TcpMultiplexTest {

    /** Connections a peer's pipelined runs may use: the shared one, and the pooled one of a run that began alone. */
    private static final int MAX_CONNECTIONS = 2;
    private static final byte UNTOUCHED = 0x11;

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        arena.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        toClose.add(resource);
        return resource;
    }

    @Test
    void sixteenConcurrentActionsOfSmallOps_toOnePeer_openAtMostTwoConnections_andEachMovesItsOwnBytes() throws Exception {
        int threads = 16;
        int ops = 64;
        int size = 8;
        int actions = 30;
        TcpTesting.Instrumented owner = closing(TcpTesting.instrumented());
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        RdmaBuffer buffer = closing(await(owner.manager().allocate((long) threads * ops * size)));
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            CompletableFuture<Void> f = new CompletableFuture<>();
            done.add(f);
            Thread.ofPlatform().name("mux-test-" + t).start(() -> {
                try {
                    go.await();
                    long base = (long) thread * ops * size;
                    MemorySegment source = arena.allocate((long) ops * size, 8);
                    MemorySegment back = arena.allocate((long) ops * size, 8);
                    for (int a = 0; a < actions; a++) {
                        Patterns.fill(source, thread * 1000L + a);
                        RdmaAction writes = holder.manager().newAction();
                        RdmaAction reads = holder.manager().newAction();
                        for (int i = 0; i < ops; i++) {
                            RdmaRemoteBuffer slot = buffer.remote().slice(base + (long) i * size, size);
                            writes.writeFrom(slot, source.asSlice((long) i * size, size));
                            reads.readInto(slot, back.asSlice((long) i * size, size));
                        }
                        writes.submit(TRANSFER_TIMEOUT).join();
                        back.fill((byte) 0);
                        reads.submit(TRANSFER_TIMEOUT).join();
                        long at = Patterns.mismatch(source, back, (long) ops * size);
                        if (at >= 0) {
                            throw new AssertionError("thread " + thread + ", action " + a + ": byte " + at + " read back differs");
                        }
                    }
                    f.complete(null);
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            });
        }
        go.countDown();
        for (CompletableFuture<Void> f : done) {
            await(f);
        }
        long opened = holder.transport().pool().openedCount();
        assertTrue(opened <= MAX_CONNECTIONS, threads + " threads' actions opened " + opened + " connections to one peer");
    }

    @Test
    void cancelledAction_onTheSharedConnection_leavesItsMemoryUntouched_whileTheOthersGetTheirBytes() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        // A run alone takes a pooled connection; it is still waiting, so the next runs share one.
        Submitted alone = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(2);
        Submitted cancelled = gated.submitReads(Deadline.after(SAFETY));
        Submitted other = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(6);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the concurrent runs did not share one connection");

        assertTrue(cancelled.future.cancel(true));
        assertThrows(CancellationException.class, cancelled.future::join);
        Submitted after = gated.submitReads(Deadline.after(SAFETY)); // its replies come after the cancelled one's
        gated.awaitRequests(8);
        peer.open();

        for (Submitted s : List.of(alone, other, after)) {
            await(s.future);
            s.assertAll(GatedPeer.PAYLOAD_BYTE);
        }
        cancelled.assertAll(UNTOUCHED);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the cancel cost the others their connection");
    }

    @Test
    void timedOutAction_onTheSharedConnection_leavesItsMemoryUntouched_whileTheOthersGetTheirBytes() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        Submitted alone = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(2);
        Submitted timedOut = gated.submitReads(Deadline.after(Duration.ofMillis(300)));
        Submitted other = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(6);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the concurrent runs did not share one connection");

        TransportException timeout = assertInstanceOf(TransportException.class, failureOf(timedOut.future));
        assertEquals(TransportException.Kind.TIMEOUT, timeout.kind(), timeout.toString());
        Submitted after = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(8);
        peer.open();

        for (Submitted s : List.of(alone, other, after)) {
            await(s.future);
            s.assertAll(GatedPeer.PAYLOAD_BYTE);
        }
        timedOut.assertAll(UNTOUCHED);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the timeout cost the others their connection");
    }

    @Test
    void refusedOp_onTheSharedConnection_failsOnlyItsAction_andTheConnectionGoesOn() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        Submitted alone = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(2);
        Submitted refused = gated.submitReads(Deadline.after(SAFETY), GatedPeer.REFUSED_OFFSET);
        Submitted other = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(6);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the concurrent runs did not share one connection");

        peer.open();

        TransportException e = assertInstanceOf(TransportException.class, failureOf(refused.future));
        assertEquals(TransportException.Kind.REMOTE_ACCESS, e.kind(), e.toString());
        assertTrue(e.getMessage().contains("(op 2 of 2)"), e.getMessage());
        for (Submitted s : List.of(alone, other)) {
            await(s.future);
            s.assertAll(GatedPeer.PAYLOAD_BYTE);
        }
        Submitted after = gated.submitReads(Deadline.after(SAFETY)); // alone now: its own pooled connection
        await(after.future);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the refusal cost the others their connection");
    }

    @Test
    void sharedConnection_closesWithItsReader_onceIdle() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        Submitted alone = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(2);
        Submitted shared = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(4);
        assertEquals(1, holder.transport().sharedRoundsInFlight(), "the second run is not on the shared connection");
        peer.open();
        await(alone.future);
        await(shared.future);

        // Left: the data endpoint's acceptor; the alone run's connection idles in the pool.
        TcpTesting.awaitCondition("the shared connection's reader ends", () -> holder.transport().liveThreadCount() == 1);
        assertEquals(0, holder.transport().pool().checkedOutCount(), "the shared connection is still open");
    }

    @Test
    void peerNoLongerUsed_leavesNoLaneBehind_onceItsConnectionsExpired() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented("rdma.tcp.idleTimeout", "1s"));
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        Submitted alone = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(2);
        Submitted shared = gated.submitReads(Deadline.after(SAFETY));
        gated.awaitRequests(4);
        assertEquals(1, holder.transport().laneCount(), "no lane for the peer while runs to it are in progress");
        peer.open();
        await(alone.future);
        await(shared.future);

        TcpTesting.awaitCondition("the peer's lane is forgotten", () -> holder.transport().laneCount() == 0);
    }

    @Test
    void closingTheTransport_failsEveryRoundWaitingOnTheSharedConnection() throws Exception {
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        GatedPeer peer = closing(new GatedPeer());
        Gated gated = new Gated(holder, peer);
        List<Submitted> waiting = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiting.add(gated.submitReads(Deadline.after(SAFETY)));
        }
        gated.awaitRequests(8);
        assertEquals(MAX_CONNECTIONS, peer.connectionCount(), "the concurrent runs did not share one connection");

        holder.close();

        for (Submitted s : waiting) {
            TransportException e = assertInstanceOf(TransportException.class, failureOf(s.future));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            s.assertAll(UNTOUCHED);
        }
        TcpTesting.awaitCondition("the transport's threads end", () -> holder.transport().liveThreadCount() == 0);
    }

    @Test
    void peerKilled_withRoundsOfSeveralActionsInFlight_failsThemAllAsUnreachable_andAnotherPeerStillServes() throws Exception {
        Assumptions.assumeTrue(ProcessStats.available(), "needs /proc/self/fd");
        int actions = 8;
        TcpTesting.Instrumented holder = closing(TcpTesting.instrumented());
        PeerProcess victim = closing(PeerProcess.start(List.of(), "size=65536"));
        PeerProcess bystander = closing(PeerProcess.start(List.of(), "size=65536"));
        Signals.stop(victim.pid());
        List<CompletableFuture<Void>> running = new ArrayList<>();
        for (int a = 0; a < actions; a++) {
            RdmaAction action = holder.manager().newAction();
            for (int i = 0; i < 64; i++) {
                action.readInto(victim.token().slice(i * 8L, 8), arena.allocate(8, 8));
            }
            running.add(action.submit(TRANSFER_TIMEOUT));
        }
        // One run alone on a pooled connection, the others' rounds written on the shared one.
        TcpTesting.awaitCondition("every action's requests are out",
                () -> holder.transport().pool().checkedOutCount() + holder.transport().sharedRoundsInFlight() >= actions);
        long opened = holder.transport().pool().openedCount();
        assertTrue(opened <= MAX_CONNECTIONS, actions + " concurrent actions opened " + opened + " connections to one peer");

        victim.process().destroyForcibly();
        victim.process().waitFor();

        for (CompletableFuture<Void> f : running) {
            Throwable failure = failureOf(f);
            RdmaException e = assertInstanceOf(RdmaException.class, failure, failure.toString());
            assertInstanceOf(PeerUnreachableException.class, e instanceof PeerUnreachableException ? e : e.getCause(),
                    e.toString());
        }
        MemorySegment local = arena.allocate(8 * 64, 8);
        RdmaAction reads = holder.manager().newAction();
        for (int i = 0; i < 64; i++) {
            reads.readInto(bystander.token().slice(i * 8L, 8), local.asSlice(i * 8L, 8));
        }
        reads.submit(TRANSFER_TIMEOUT).join();
    }


    /** A submit of two 8-byte reads into memory of its own, filled with {@link #UNTOUCHED} first. */
    private record Submitted(CompletableFuture<Void> future, MemorySegment local) {
        void assertAll(byte expected) {
            for (long i = 0; i < local.byteSize(); i++) {
                byte b = local.get(ValueLayout.JAVA_BYTE, i);
                if (b != expected) {
                    fail("byte " + i + " is 0x" + Integer.toHexString(b & 0xff) + ", expected 0x"
                            + Integer.toHexString(expected & 0xff));
                }
            }
        }
    }

    /** Submits straight to the holder's transport, reading from the gated peer. */
    private final class Gated {
        private final TcpTesting.Instrumented holder;
        private final GatedPeer peer;
        private final RemoteBufferRef ref;

        Gated(TcpTesting.Instrumented holder, GatedPeer peer) throws Exception {
            this.holder = holder;
            this.peer = peer;
            TcpTesting.Instrumented owner = closing(TcpTesting.instrumented());
            RdmaRemoteBuffer someToken = closing(await(owner.manager().allocate(4096))).remote();
            this.ref = TokenRefs.refFor(TestTokens.pointingAt(someToken, peer.endpoint()), "tcp");
        }

        Submitted submitReads(Deadline deadline) {
            return submitReads(deadline, 8);
        }

        /** Reads at 0 and at {@code secondOffset}. */
        Submitted submitReads(Deadline deadline, long secondOffset) {
            MemorySegment local = arena.allocate(16, 8).fill(UNTOUCHED);
            CompletableFuture<Void> f = holder.transport().submit(List.of(
                    new TransportOp(TransportOp.OpType.READ_INTO_LOCAL, local.asSlice(0, 8), null, ref, ref.context(), 0),
                    new TransportOp(TransportOp.OpType.READ_INTO_LOCAL, local.asSlice(8, 8), null, ref, ref.context(),
                            secondOffset)),
                    deadline);
            return new Submitted(f, local);
        }

        void awaitRequests(int n) {
            TcpTesting.awaitCondition(n + " requests at the gated peer", () -> peer.requestCount() >= n);
        }
    }
}
