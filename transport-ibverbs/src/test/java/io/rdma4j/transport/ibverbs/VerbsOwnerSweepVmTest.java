package io.rdma4j.transport.ibverbs;

import io.rdma4j.testing.Signals;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.PeerJvm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.function.LongPredicate;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The owner's liveness sweep in the soft-RoCE VM: the owner (this JVM, rxe1) keeps accepted queue
 * pairs for two holders on rxe0, one in this JVM and one in a peer JVM ({@link VerbsPeerMain}),
 * each with {@code rdma.ibverbs.qpsPerPeer} = 4. A killed peer JVM's queue pairs are destroyed
 * while the live holder's stay in service; a stopped one's stay (a probe that times out proves
 * nothing), and so do those of a holder whose advertised endpoint does not reach it.
 */
@Tag("softroce")
class VerbsOwnerSweepVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PEER_ANSWER = Duration.ofSeconds(120);
    private static final String QPS = "4";

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs, String device, String... settings) {
        return managers.track(verbs.builder(device, settings).set(VerbsSettings.QPS_PER_PEER.key(), QPS).build());
    }

    /** An owner on rxe1 checking its holders every {@code interval}, a live holder of this JVM, and a peer JVM holder. */
    private final class Scene implements AutoCloseable {
        final OpenedVerbs ownerVerbs = new OpenedVerbs();
        final OpenedVerbs liveVerbs = new OpenedVerbs();
        final RdmaManager live = manager(liveVerbs, "rxe0");
        final RdmaBuffer buffer;
        final String token;
        final PeerJvm peer;

        /** Each holder reads, or writes, four times: four accepted queue pairs each. */
        Scene(String interval, String... ownerSettings) throws Exception {
            RdmaManager owner = managers.track(ownerVerbs.builder("rxe1", ownerSettings)
                    .set(VerbsSettings.QPS_PER_PEER.key(), QPS)
                    .set(VerbsSettings.PEER_CHECK_INTERVAL.key(), interval).build());
            buffer = owner.allocate(4096).join();
            DataPattern.fill(buffer.segment(), 21);
            token = HexFormat.of().formatHex(buffer.remote().toBytes());
            readAllSlots();
            peer = PeerJvm.start(VerbsPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"), PEER_ANSWER,
                    "rdma.ibverbs.target=nic:rxe0", VerbsSettings.QPS_PER_PEER.key() + "=" + QPS);
            try {
                writeAllSlots();
                assertEquals(8, ownerVerbs.transport().acceptedQueuePairs(), "four for each holder");
                // each answered the probe that follows its first handshake
                await("holders that answered the owner", () -> ownerVerbs.transport().reachableHolders(), n -> n == 2);
            } catch (Exception | Error e) {
                peer.close();
                throw e;
            }
        }

        void readAllSlots() {
            readEverySlot(live, buffer);
        }

        /** The peer JVM writes the buffer's own bytes four times: every slot once. */
        void writeAllSlots() throws Exception {
            for (int i = 0; i < 4; i++) {
                assertEquals("OK", peer.command("write " + token + " 21"));
            }
        }

        int acceptedQueuePairs() {
            return ownerVerbs.transport().acceptedQueuePairs();
        }

        @Override
        public void close() throws InterruptedException {
            peer.close();
        }
    }

    /** {@code holder} reads {@code buffer} (pattern 21) four times: small ops take turns, so every slot once. */
    private void readEverySlot(RdmaManager holder, RdmaBuffer buffer) {
        MemorySegment local = managers.arena().allocate(4096);
        for (int i = 0; i < 4; i++) {
            holder.read(buffer.remote(), local, TIMEOUT).join();
        }
        assertEquals(-1, DataPattern.mismatch(local, 21));
    }

    @Test
    void holderJvmKilled_ownerDestroysItsAcceptedQueuePairs_whileALiveHoldersStayInService() throws Exception {
        try (Scene scene = new Scene("200ms")) {
            scene.peer.process().destroyForcibly().waitFor();        // SIGKILL: nothing listens at its endpoint any more

            await("the owner's accepted queue pairs", scene::acceptedQueuePairs, n -> n == 4);
            scene.readAllSlots();                                   // every live slot once more: none was destroyed
            assertAll(
                    () -> assertEquals(4, scene.acceptedQueuePairs(), "the live holder's four stay"),
                    () -> assertEquals(4, scene.liveVerbs.transport().liveQueuePairs(), "and none of them broke"),
                    () -> assertEquals(4, scene.liveVerbs.transport().trackedConnections(), "nor was replaced"));
        }
    }

    @Test
    void holderJvmStopped_itsProbesTimeOut_andItsAcceptedQueuePairsStayInService() throws Exception {
        try (Scene scene = new Scene("500ms")) {
            long before = scene.ownerVerbs.transport().unansweredProbes();
            Signals.stop(scene.peer.process().pid());      // its control endpoint accepts connections but answers nothing
            try {
                await("unanswered probes", scene.ownerVerbs.transport()::unansweredProbes, n -> n >= before + 1);
                assertEquals(8, scene.acceptedQueuePairs(), "a probe without an answer destroyed nothing");
                // the stopped holder is asked again next round
                await("unanswered probes", scene.ownerVerbs.transport()::unansweredProbes, n -> n >= before + 2);
                assertEquals(8, scene.acceptedQueuePairs(), "nor did the next one");
            } finally {
                Signals.resume(scene.peer.process().pid());
            }

            scene.writeAllSlots();                     // its queue pairs still serve it
            assertEquals(8, scene.acceptedQueuePairs());
        }
    }

    @Test
    void holderJvmStoppedForTheSilenceLimit_ownerDestroysItsAcceptedQueuePairs_whileALiveHoldersStayInService()
            throws Exception {
        try (Scene scene = new Scene("200ms", VerbsSettings.PEER_SILENCE_LIMIT.key() + "=1s")) {
            Signals.stop(scene.peer.process().pid());      // its control endpoint accepts connections but answers nothing
            try {
                await("the owner's accepted queue pairs", scene::acceptedQueuePairs, n -> n == 4);
            } finally {
                Signals.resume(scene.peer.process().pid());
            }
            scene.readAllSlots();                       // every live slot once more: none was destroyed
            assertAll(
                    () -> assertEquals(4, scene.acceptedQueuePairs(), "the live holder's four stay"),
                    () -> assertEquals(4, scene.liveVerbs.transport().liveQueuePairs(), "and none of them broke"));
        }
    }

    /**
     * A holder's control endpoint need not reach it from the owner (a holder only connects to its
     * owners): refusals at an endpoint that never answered prove nothing.
     */
    @Test
    void holderAdvertisingAnEndpointThatDoesNotReachIt_keepsItsAcceptedQueuePairsInService() throws Exception {
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        RdmaManager owner = manager(ownerVerbs, "rxe1", VerbsSettings.PEER_CHECK_INTERVAL.key() + "=200ms");
        RdmaBuffer buffer = owner.allocate(4096).join();
        DataPattern.fill(buffer.segment(), 21);
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager holder = manager(holderVerbs, "rxe0", "rdma.advertisedHost=127.0.0.2");   // it listens on 127.0.0.1 only
        readEverySlot(holder, buffer);

        // the probe that follows its first handshake, and a round's, were refused
        await("unanswered probes", ownerVerbs.transport()::unansweredProbes, n -> n >= 2);
        readEverySlot(holder, buffer);                 // every slot once more: none was destroyed

        assertAll(
                () -> assertEquals(4, ownerVerbs.transport().acceptedQueuePairs()),
                () -> assertEquals(0, ownerVerbs.transport().reachableHolders()),
                () -> assertEquals(4, holderVerbs.transport().liveQueuePairs(), "none of the holder's broke"),
                () -> assertEquals(4, holderVerbs.transport().trackedConnections(), "nor was replaced"));
    }

    /**
     * Polls {@code what} until {@code until} holds, failing after {@link #TIMEOUT}. Polls with a
     * deadline: the sweep's rounds, the peers' answers and the kernel closing a killed JVM's
     * sockets come on their own time.
     */
    private static void await(String what, LongSupplier value, LongPredicate until) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!until.test(value.getAsLong())) {
            assertTrue(System.nanoTime() < deadline, what + " is still " + value.getAsLong() + " after " + TIMEOUT);
            Thread.sleep(20);
        }
    }
}
