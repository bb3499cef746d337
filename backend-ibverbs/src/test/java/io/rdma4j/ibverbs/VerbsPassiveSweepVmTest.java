package io.rdma4j.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
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

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The owner's liveness sweep in the soft-RoCE VM: the owner (this JVM, rxe1) keeps passive queue
 * pairs for two holders on rxe0, one in this JVM and one in a peer JVM ({@link VerbsPeerMain}),
 * each with {@code rdma.ibverbs.qpsPerPeer} = 4; the peer JVM is killed and the sweep, every 200
 * ms, destroys its queue pairs while the live holder's stay in service.
 */
@Tag("softroce")
class VerbsPassiveSweepVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration PEER_ANSWER = Duration.ofSeconds(120);
    private static final String QPS = "4";

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs, String device, String... settings) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(List.of(verbs))
                .set(IbverbsSettings.QPS_PER_PEER.key(), QPS)
                .set(IbverbsSettings.TARGET.key(), "nic:" + device);
        for (String s : settings) {
            int eq = s.indexOf('=');
            b.set(s.substring(0, eq), s.substring(eq + 1));
        }
        return managers.track(b.build());
    }

    @Test
    void holderJvmKilled_ownerDestroysItsPassiveQueuePairs_whileALiveHoldersStayInService() throws Exception {
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        RdmaManager owner = manager(ownerVerbs, "rxe1", IbverbsSettings.PEER_CHECK_INTERVAL.key() + "=200ms");
        RdmaBuffer buffer = owner.allocate(4096).join();
        DataPattern.fill(buffer.segment(), 21);
        OpenedVerbs liveVerbs = new OpenedVerbs();
        RdmaManager live = manager(liveVerbs, "rxe0");
        for (int i = 0; i < 4; i++) {
            live.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();   // small ops take turns: four slots
        }
        try (PeerJvm doomed = PeerJvm.start(VerbsPeerMain.class, List.of("--enable-native-access=ALL-UNNAMED"), PEER_ANSWER,
                "rdma.ibverbs.target=nic:rxe0", IbverbsSettings.QPS_PER_PEER.key() + "=" + QPS)) {
            String token = HexFormat.of().formatHex(buffer.remote().toBytes());
            for (int i = 0; i < 4; i++) {
                assertEquals("OK", doomed.command("write " + token + " 21"));    // the same bytes: four slots
            }
            assertEquals(8, ownerVerbs.transport().passiveQueuePairs(), "four for each holder");

            doomed.process().destroyForcibly().waitFor();        // SIGKILL: nothing listens at its endpoint any more
        }

        awaitPassiveQueuePairs(ownerVerbs, 4);
        MemorySegment local = managers.arena().allocate(4096);
        for (int i = 0; i < 4; i++) {
            live.read(buffer.remote(), local, TIMEOUT).join();        // every slot once more: none was destroyed
        }
        assertAll(
                () -> assertEquals(-1, DataPattern.mismatch(local, 21)),
                () -> assertEquals(4, ownerVerbs.transport().passiveQueuePairs(), "the live holder's four stay"),
                () -> assertEquals(4, liveVerbs.transport().liveQueuePairs(), "and none of them broke"),
                () -> assertEquals(4, liveVerbs.transport().trackedConnections(), "nor was replaced"));
    }

    /**
     * Waits until the owner keeps {@code expected} passive queue pairs. Polls with a deadline: the
     * sweep's rounds, and the kernel closing the killed JVM's sockets, come on their own time.
     */
    private static void awaitPassiveQueuePairs(OpenedVerbs owner, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (owner.transport().passiveQueuePairs() != expected) {
            assertTrue(System.nanoTime() < deadline, "the owner still keeps " + owner.transport().passiveQueuePairs()
                    + " passive queue pairs, not " + expected + ", after " + TIMEOUT);
            Thread.sleep(20);
        }
    }
}
