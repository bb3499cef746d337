package io.rdma4j.transport.ibverbs;

import io.rdma4j.testing.Signals;
import io.rdma4j.PeerUnreachableException;
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
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The holder's liveness sweep in the soft-RoCE VM: the holder (this JVM, rxe0, checking its owners
 * every 200 ms) keeps four queue pairs ({@code rdma.ibverbs.qpsPerPeer} = 4) to each of two owners
 * on rxe1, one in a peer JVM ({@link VerbsPeerMain}) and one in this JVM. When the peer JVM is
 * killed, the holder's queue pairs to it are destroyed and its books forget it, while those to the
 * live owner stay in service.
 */
@Tag("softroce")
class VerbsHolderSweepVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PEER_ANSWER = Duration.ofSeconds(120);
    private static final String QPS = "4";

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs, String device, String... settings) {
        return managers.track(verbs.builder(device, settings).set(VerbsSettings.QPS_PER_PEER.key(), QPS).build());
    }

    @Test
    void ownerJvmKilled_holderDestroysItsQueuePairsToIt_whileThoseToALiveOwnerStayInService() throws Exception {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager holder = manager(holderVerbs, "rxe0", VerbsSettings.PEER_CHECK_INTERVAL.key() + "=200ms");
        RdmaBuffer liveBuffer = manager(new OpenedVerbs(), "rxe1").allocate(4096).join();
        DataPattern.fill(liveBuffer.segment(), 21);
        VerbsTransport holderSide = holderVerbs.transport();
        RdmaRemoteBuffer goneBuffer;
        try (PeerJvm owner = startOwner()) {
            goneBuffer = allocate(owner, 22);
            readEverySlot(holder, goneBuffer, 22);
            readEverySlot(holder, liveBuffer.remote(), 21);
            assertAll(
                    () -> assertEquals(8, holderSide.liveQueuePairs(), "four to each owner"),
                    () -> assertEquals(2, holderSide.owners()));

            owner.process().destroyForcibly().waitFor();       // SIGKILL: nothing listens at its endpoint any more
        }

        await("the holder's connections", holderSide::trackedConnections, n -> n == 4);
        readEverySlot(holder, liveBuffer.remote(), 21);           // every live slot once more: none was destroyed
        assertAll(
                () -> assertEquals(1, holderSide.owners(), "the gone owner is forgotten"),
                () -> assertEquals(4, holderSide.liveQueuePairs(), "the live owner's four stay in service"),
                () -> assertEquals(4, holderSide.trackedConnections(), "and none of them was replaced"));
    }

    @Test
    void opToAnOwnerFoundGone_failsAsUnreachable_andItsFailedHandshakeIsForgottenToo() throws Exception {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager holder = manager(holderVerbs, "rxe0", VerbsSettings.PEER_CHECK_INTERVAL.key() + "=200ms");
        VerbsTransport holderSide = holderVerbs.transport();
        RdmaRemoteBuffer goneBuffer;
        try (PeerJvm owner = startOwner()) {
            goneBuffer = allocate(owner, 23);
            readEverySlot(holder, goneBuffer, 23);
            owner.process().destroyForcibly().waitFor();
        }
        await("owners the holder keeps queue pairs for", holderSide::owners, n -> n == 0);

        MemorySegment local = managers.arena().allocate(4096);
        CompletionException e = assertThrows(CompletionException.class, () -> holder.read(goneBuffer, local, TIMEOUT).join());
        Throwable cause = assertInstanceOf(RdmaSubmitException.class, e.getCause()).getCause();
        assertInstanceOf(PeerUnreachableException.class, cause, () -> String.valueOf(cause));

        // the failed handshake is remembered for the dead owner, until the sweep finds it gone again
        await("owners the holder keeps queue pairs or a failed handshake for", holderSide::owners, n -> n == 0);
        assertEquals(0, holderSide.trackedConnections());
    }

    @Test
    void ownerJvmStoppedForTheSilenceLimit_holderRetiresItsQueuePairsToIt_whileThoseToALiveOwnerStayInService()
            throws Exception {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager holder = manager(holderVerbs, "rxe0", VerbsSettings.PEER_CHECK_INTERVAL.key() + "=200ms",
                VerbsSettings.PEER_SILENCE_LIMIT.key() + "=1s");
        RdmaBuffer liveBuffer = manager(new OpenedVerbs(), "rxe1").allocate(4096).join();
        DataPattern.fill(liveBuffer.segment(), 24);
        VerbsTransport holderSide = holderVerbs.transport();
        try (PeerJvm owner = startOwner()) {
            readEverySlot(holder, allocate(owner, 25), 25);
            readEverySlot(holder, liveBuffer.remote(), 24);
            assertEquals(2, holderSide.owners());

            Signals.stop(owner.process().pid());       // its endpoint accepts connections but answers nothing: no proof
            try {
                await("owners the holder keeps queue pairs for", holderSide::owners, n -> n == 1);
            } finally {
                Signals.resume(owner.process().pid());
            }
        }
        readEverySlot(holder, liveBuffer.remote(), 24);           // every live slot once more: none was destroyed
        assertEquals(4, holderSide.liveQueuePairs(), "the live owner's four stay in service");
    }

    /** An owner manager on rxe1 in a peer JVM, with four queue pairs per holder. */
    private static PeerJvm startOwner() throws IOException, InterruptedException {
        return PeerJvm.start(VerbsPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"), PEER_ANSWER,
                "rdma.ibverbs.target=nic:rxe1", VerbsSettings.QPS_PER_PEER.key() + "=" + QPS);
    }

    /** A 4 KiB buffer the peer JVM's manager allocates and fills with pattern {@code seed}: its token. */
    private static RdmaRemoteBuffer allocate(PeerJvm owner, int seed) throws IOException, InterruptedException {
        String answer = owner.command("alloc 4096 " + seed);
        assertTrue(answer.startsWith("TOKEN "), answer);
        return RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(answer.substring(6)));
    }

    /** {@code holder} reads {@code buffer} (pattern {@code seed}) four times: small ops take turns, so every slot once. */
    private void readEverySlot(RdmaManager holder, RdmaRemoteBuffer buffer, long seed) {
        MemorySegment local = managers.arena().allocate(4096);
        for (int i = 0; i < 4; i++) {
            holder.read(buffer, local, TIMEOUT).join();
        }
        assertEquals(-1, DataPattern.mismatch(local, seed));
    }

    /**
     * Polls {@code what} until {@code until} holds, failing after {@link #TIMEOUT}. Polls with a
     * deadline: the sweep's rounds and the kernel closing a killed JVM's sockets come on their own time.
     */
    private static void await(String what, LongSupplier value, LongPredicate until) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!until.test(value.getAsLong())) {
            assertTrue(System.nanoTime() < deadline, what + " is still " + value.getAsLong() + " after " + TIMEOUT);
            Thread.sleep(20);
        }
    }
}
