package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs;
import io.rdma4j.transport.ibverbs.queuepair.PeerGroup;
import io.rdma4j.transport.ibverbs.queuepair.QueuePairLifecycle;
import io.rdma4j.spi.ControlChannel;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.Watchdog;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How long queue pairs live: the owner's accepted ones (one per holder slot, whatever breaks and
 * comes back), and a handshake that close overtakes. Managers of this JVM on the first soft-RoCE
 * device of the VM, {@code rdma.ibverbs.qpsPerPeer} = 4.
 */
@Tag("softroce")
class VerbsQueuePairLifetimeVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long MIB = 1L << 20;
    private static final String DEVICE = System.getenv("SOFTROCE_DEVICES") == null ? "rxe0"
            : System.getenv("SOFTROCE_DEVICES").trim().split("\\s+")[0];

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs, String... settings) {
        return managers.track(verbs.builder(DEVICE, settings).set(VerbsSettings.QPS_PER_PEER.key(), "4").build());
    }

    private MemorySegment pattern(long size, int seed) {
        return DataPattern.fill(managers.arena().allocate(size, 64), seed);
    }

    @Test
    void brokenQueuePairsReplaced_ownerKeepsOneAcceptedQueuePairPerHolderSlot() {
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager owner = manager(ownerVerbs);
        RdmaManager holder = manager(holderVerbs);
        RdmaBuffer doomed = owner.allocate(8 * MIB).join();
        holder.write(doomed.remote(), pattern(8 * MIB, 1), TIMEOUT).join();     // four stripes: four queue pairs each side
        assertEquals(4, ownerVerbs.transport().acceptedQueuePairs(), "one accepted queue pair per holder slot");
        doomed.close();
        assertThrows(CompletionException.class, () -> holder.write(doomed.remote(), pattern(8 * MIB, 2), TIMEOUT).join(),
                "a write to a deregistered region breaks the queue pairs");

        RdmaBuffer next = owner.allocate(8 * MIB).join();
        holder.write(next.remote(), pattern(8 * MIB, 3), TIMEOUT).join();       // four new handshakes

        assertAll(
                () -> assertEquals(-1, DataPattern.mismatch(next.segment(), 3), "the replacements moved the bytes"),
                () -> assertEquals(4, holderVerbs.transport().liveQueuePairs(), "the holder's four slots are up again"),
                () -> assertEquals(4, ownerVerbs.transport().acceptedQueuePairs(),
                        "the owner destroyed each accepted queue pair the holder replaced"),
                () -> assertEquals(4, holderVerbs.transport().trackedConnections(),
                        "the holder forgot its destroyed connections"));
    }

    @Test
    void holderRestartedOnItsEndpoint_ownerDestroysThePredecessorsAcceptedQueuePairs() throws IOException {
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        RdmaManager owner = manager(ownerVerbs);
        RdmaBuffer buffer = owner.allocate(4096).join();
        int port = freePort();
        RdmaManager first = manager(new OpenedVerbs(), "rdma.controlPort=" + port);
        for (int i = 0; i < 4; i++) {
            first.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();   // small ops take turns: four slots
        }
        assertEquals(4, ownerVerbs.transport().acceptedQueuePairs());
        Endpoint endpoint = first.controlEndpoint();
        first.close();

        RdmaManager second = manager(new OpenedVerbs(), "rdma.controlPort=" + port);
        for (int i = 0; i < 4; i++) {
            second.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();
        }

        assertAll(
                () -> assertEquals(endpoint, second.controlEndpoint(), "the successor is on the same endpoint"),
                () -> assertEquals(4, ownerVerbs.transport().acceptedQueuePairs(),
                        "the successor's four; its predecessor's were destroyed"));
    }

    @Test
    void ownerRestartedOnItsEndpoint_holderTakesItsQueuePairsToThePredecessorOutOfService() throws IOException {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager holder = manager(holderVerbs);
        int port = freePort();
        RdmaManager first = manager(new OpenedVerbs(), "rdma.controlPort=" + port);
        RdmaBuffer before = first.allocate(4096).join();
        for (int i = 0; i < 4; i++) {
            holder.read(before.remote(), managers.arena().allocate(4096), TIMEOUT).join();   // small ops take turns: four slots
        }
        assertEquals(4, holderVerbs.transport().liveQueuePairs());
        Endpoint endpoint = first.controlEndpoint();
        first.close();

        RdmaManager second = manager(new OpenedVerbs(), "rdma.controlPort=" + port);
        RdmaBuffer after = second.allocate(4096).join();
        DataPattern.fill(after.segment(), 9);
        MemorySegment local = managers.arena().allocate(4096);
        for (int i = 0; i < 4; i++) {
            holder.read(after.remote(), local, TIMEOUT).join();
        }

        assertAll(
                () -> assertEquals(endpoint, second.controlEndpoint(), "the successor is on the same endpoint"),
                () -> assertEquals(-1, DataPattern.mismatch(local, 9)),
                () -> assertEquals(4, holderVerbs.transport().liveQueuePairs(),
                        "the four to the successor; those to its predecessor left service"),
                () -> assertEquals(4, holderVerbs.transport().trackedConnections(), "and were destroyed"));
    }

    @Test
    void closeWhileAHandshakeAwaitsItsReply_destroysItsQueuePair_andTheLateReplyTouchesNothing() {
        Handshaking h = new Handshaking();
        CompletableFuture<VerbsConnection> connection = h.connect();
        h.held.arrived.join();          // the owner answered: only this side's handling of the reply is left
        assertEquals(1, h.peers.handshakingQueuePairs());

        h.lifecycle.close();

        assertEquals(0, h.peers.handshakingQueuePairs(), "close destroyed the queue pair of the pending handshake");
        h.held.gate.complete(null);     // the reply is handled now, on this thread
        CompletionException e = assertThrows(CompletionException.class, connection::join);
        TransportException te = assertInstanceOf(TransportException.class, e.getCause());
        assertAll(
                () -> assertTrue(te.getMessage().contains("ended by close"), te.getMessage()),
                () -> assertEquals(0, h.peers.trackedConnections(), "no connection was made after close"));
    }

    @Test
    void handshakeFinishedBeforeClose_givesAConnection_thatCloseDestroys() {
        Handshaking h = new Handshaking();
        CompletableFuture<VerbsConnection> connection = h.connect();
        h.held.gate.complete(null);
        VerbsConnection c = connection.join();
        assertFalse(c.isDestroyed());

        h.lifecycle.close();
        h.lifecycle.close();

        assertAll(
                () -> assertTrue(c.isDestroyed(), "close destroyed the connection's queue pair"),
                () -> assertEquals(0, h.peers.trackedConnections()),
                () -> assertEquals(0, h.peers.handshakingQueuePairs()));
    }

    /**
     * An owner and a holder manager, and a second set of queue pairs on the holder's device
     * ({@link #peers}) whose handshake replies wait in {@link #held} until the test lets them through.
     */
    private final class Handshaking {
        final OpenedVerbs ownerVerbs = new OpenedVerbs();
        final OpenedVerbs holderVerbs = new OpenedVerbs();
        final RdmaManager owner = manager(ownerVerbs);
        final RdmaManager holder = manager(holderVerbs);
        final HeldReplies held = new HeldReplies(holderVerbs.context().control());
        final VerbsDevice device = holderVerbs.transport().devices().getFirst();
        final QueuePairLifecycle lifecycle = new QueuePairLifecycle();
        final HolderQueuePairs peers = new HolderQueuePairs(new WithControl(holderVerbs.context(), held),
                VerbsTuning.of(holderVerbs.context().settings()).clampTo(device.name, device.attributes, device.cq.entries(),
                        note -> { }), TIMEOUT, () -> { }, lifecycle);

        CompletableFuture<VerbsConnection> connect() {
            return peers.connection(peers.group(new PeerGroup.Key(device, owner.controlEndpoint(), owner.incarnation(),
                    ownerVerbs.transport().devices().getFirst().name)), 0);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The real control channel, except that replies wait for {@link #gate}; {@link #arrived} has the real reply. */
    private static final class HeldReplies implements ControlChannel {
        final ControlChannel real;
        final CompletableFuture<byte[]> arrived = new CompletableFuture<>();
        final CompletableFuture<Void> gate = new CompletableFuture<>();

        HeldReplies(ControlChannel real) {
            this.real = real;
        }

        @Override
        public void onRequest(Handler handler) {
            throw new UnsupportedOperationException("the test's queue pairs serve no requests");
        }

        @Override
        public CompletableFuture<byte[]> request(Endpoint peer, byte[] payload, Deadline deadline) {
            CompletableFuture<byte[]> reply = real.request(peer, payload, deadline);
            reply.whenComplete((r, t) -> {
                if (t == null) {
                    arrived.complete(r);
                } else {
                    arrived.completeExceptionally(t);
                }
            });
            return reply.thenCombine(gate, (r, open) -> r);
        }
    }

    /** A transport context that is the manager's, with another control channel. */
    private record WithControl(TransportContext real, ControlChannel control) implements TransportContext {
        @Override
        public Settings settings() {
            return real.settings();
        }

        @Override
        public RegistrationLookup registrations() {
            return real.registrations();
        }

        @Override
        public Endpoint controlEndpoint() {
            return real.controlEndpoint();
        }

        @Override
        public String advertisedHost() {
            return real.advertisedHost();
        }

        @Override
        public String bindHost() {
            return real.bindHost();
        }

        @Override
        public NanoClock clock() {
            return real.clock();
        }

        @Override
        public Watchdog watchdog() {
            return real.watchdog();
        }

        @Override
        public byte[] incarnation() {
            return real.incarnation();
        }
    }
}
