package io.rdma4j;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportException;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ControlPlaneTest {

    private static final Duration PROBE = Duration.ofSeconds(5);
    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(StubProvider... providers) {
        return managers.start(providers);
    }

    @AfterEach
    void tearDown() {
        SharedManager.closeLingeringEndpoints();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static PeerReadiness probe(RdmaManager from, Endpoint peer, Duration timeout) {
        return from.probeReadiness(List.of(peer), timeout).join().get(peer);
    }

    @Test
    void release_toAnOwnerRestartedOnTheSameEndpoint_succeedsAlthoughThePooledConnectionToItsPredecessorDied()
            throws IOException {
        int port = freePort();
        RdmaManager holder = manager(new StubProvider("stub", 1));
        RdmaManager first = managers.track(RdmaManager.newBuilder().isolated()
                .providers(List.of(new StubProvider("stub", 1))).set("rdma.controlPort", String.valueOf(port)).build());
        holder.release(first.register(managers.arena().allocate(64)).join(), PROBE).join();   // pools a connection
        Endpoint endpoint = first.controlEndpoint();
        first.close();
        RdmaManager second = managers.track(RdmaManager.newBuilder().isolated()
                .providers(List.of(new StubProvider("stub", 1))).set("rdma.controlPort", String.valueOf(port)).build());
        RdmaRemoteBuffer token = second.register(managers.arena().allocate(64)).join();
        assertEquals(1, second.registeredBufferCount());

        holder.release(token, PROBE).join();

        assertEquals(endpoint, second.controlEndpoint(), "the successor is on the same endpoint");
        assertEquals(0, second.registeredBufferCount(), "the release reached the successor");
    }

    @Test
    void probeReadiness_startedManager_isReady() {
        RdmaManager a = manager(new StubProvider("stub", 1));
        RdmaManager b = manager(new StubProvider("stub", 1));

        PeerReadiness r = probe(a, b.controlEndpoint(), PROBE);

        assertEquals(PeerReadiness.State.READY, r.state());
        assertTrue(r.isReady());
    }

    @Test
    void probeReadiness_nothingListening_isUnreachableWithTheReason() throws IOException {
        RdmaManager a = manager(new StubProvider("stub", 1));
        Endpoint nobody = new Endpoint("127.0.0.1", freePort());

        // the probe retries a refused connection until the deadline (the peer may be starting); a
        // last try cut short by the deadline does not hide what the tries before it found
        PeerReadiness r = probe(a, nobody, Duration.ofSeconds(2));

        assertEquals(PeerReadiness.State.UNREACHABLE, r.state());
        assertTrue(r.detail().contains("nothing listens at " + nobody), r.detail());
    }

    @Test
    void probeReadiness_managerThatFailedToStart_isFailedWithItsStartError() throws IOException {
        RdmaManager a = manager(new StubProvider("stub", 1));
        int port = freePort();
        StubProvider none = new StubProvider("none", 1);
        none.availability = Availability.unavailable("no device here");
        assertThrows(TransportUnavailableException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(none)).set(RdmaSettings.CONTROL_PORT, port).keepEndpointOnFailure().build());

        PeerReadiness r = probe(a, new Endpoint("127.0.0.1", port), PROBE);

        assertEquals(PeerReadiness.State.FAILED, r.state());
        assertTrue(r.detail().contains("no RDMA transport available"), r.detail());
        assertTrue(r.detail().contains("none: no device here"), r.detail());
    }

    @Test
    void probeReadiness_managerStillOpeningItsTransports_isStartingUntilItFinishes() throws Exception {
        RdmaManager a = manager(new StubProvider("stub", 1));
        int port = freePort();
        StubProvider slowToOpen = new StubProvider("slow", 1);
        slowToOpen.openGate = new CountDownLatch(1);
        CompletableFuture<RdmaManager> starting = CompletableFuture.supplyAsync(() -> RdmaManager.newBuilder().isolated()
                .providers(List.of(slowToOpen)).set(RdmaSettings.CONTROL_PORT, port).build());
        Endpoint peer = new Endpoint("127.0.0.1", port);
        assertTrue(slowToOpen.openEntered.await(30, TimeUnit.SECONDS));

        PeerReadiness whileOpening = probe(a, peer, Duration.ofSeconds(3)); // retries while STARTING, then says so
        slowToOpen.openGate.countDown();
        managers.track(starting.get(30, TimeUnit.SECONDS));
        PeerReadiness afterwards = probe(a, peer, PROBE);

        assertEquals(PeerReadiness.State.STARTING, whileOpening.state());
        assertEquals(PeerReadiness.State.READY, afterwards.state());
    }

    @Test
    void probeReadiness_peerStartingAfterTheProbeBegan_isReadyWithinTheDeadline() throws Exception {
        RdmaManager a = manager(new StubProvider("stub", 1));
        int port = freePort();
        Endpoint peer = new Endpoint("127.0.0.1", port);
        CompletableFuture<Map<Endpoint, PeerReadiness>> probing = a.probeReadiness(List.of(peer), Duration.ofSeconds(30));

        managers.track(RdmaManager.newBuilder().isolated().providers(List.of(new StubProvider("late", 1)))
                .set(RdmaSettings.CONTROL_PORT, port).build());

        assertEquals(PeerReadiness.State.READY, probing.get(30, TimeUnit.SECONDS).get(peer).state());
    }

    @Test
    void probeReadiness_severalPeersUnderOneDeadline_answersEachInOrder() throws IOException {
        RdmaManager a = manager(new StubProvider("stub", 1));
        RdmaManager b = manager(new StubProvider("stub", 1));
        RdmaManager c = manager(new StubProvider("stub", 1));
        Endpoint nobody = new Endpoint("127.0.0.1", freePort());

        Map<Endpoint, PeerReadiness> answers = a.probeReadiness(
                List.of(b.controlEndpoint(), nobody, c.controlEndpoint(), b.controlEndpoint()), Duration.ofMillis(500)).join();

        assertEquals(List.of(b.controlEndpoint(), nobody, c.controlEndpoint()), List.copyOf(answers.keySet()));
        assertEquals(PeerReadiness.State.READY, answers.get(b.controlEndpoint()).state());
        assertEquals(PeerReadiness.State.UNREACHABLE, answers.get(nobody).state());
        assertEquals(PeerReadiness.State.READY, answers.get(c.controlEndpoint()).state());
    }

    @Test
    void controlEndpoint_garbageBytes_closeThatConnectionOnly_andOthersAreStillServed() throws IOException {
        RdmaManager a = manager(new StubProvider("stub", 1));
        RdmaManager b = manager(new StubProvider("stub", 1));

        try (Socket s = new Socket(b.controlEndpoint().host(), b.controlEndpoint().port())) {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            s.setSoTimeout(10_000);
            assertEquals(-1, s.getInputStream().read(), "the server closes a connection that speaks garbage");
        }

        assertEquals(PeerReadiness.State.READY, probe(a, b.controlEndpoint(), PROBE).state());
    }

    @Test
    void controlEndpoint_truncatedFrame_isDropped_andOthersAreStillServed() throws IOException {
        RdmaManager a = manager(new StubProvider("stub", 1));
        RdmaManager b = manager(new StubProvider("stub", 1));

        try (Socket s = new Socket(b.controlEndpoint().host(), b.controlEndpoint().port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(100);
            out.writeByte(2);
            out.write(new byte[10]);
            s.shutdownOutput();
            s.setSoTimeout(10_000);
            assertEquals(-1, s.getInputStream().read());
        }

        assertEquals(PeerReadiness.State.READY, probe(a, b.controlEndpoint(), PROBE).state());
    }

    @Test
    void controlEndpoint_releaseWithWrongBodyLength_closesTheConnection() throws IOException {
        RdmaManager b = manager(new StubProvider("stub", 1));

        try (Socket s = new Socket(b.controlEndpoint().host(), b.controlEndpoint().port())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(1 + 3);
            out.writeByte(2);
            out.write(new byte[3]);
            out.flush();
            s.setSoTimeout(10_000);
            InputStream in = s.getInputStream();
            assertEquals(-1, in.read());
        }
    }

    @Test
    void transportRequest_reachesTheSameTransportInThePeer_andBringsBackItsReply() {
        StubProvider mine = new StubProvider("verbs", 1);
        StubProvider theirs = new StubProvider("verbs", 1);
        manager(mine);
        RdmaManager peer = manager(theirs);
        theirs.context.control().onRequest((from, payload) -> {
            byte[] reply = new byte[payload.length + 1];
            System.arraycopy(payload, 0, reply, 1, payload.length);
            reply[0] = (byte) from.port();
            return reply;
        });

        byte[] reply = mine.context.control().request(peer.controlEndpoint(), new byte[] {4, 2},
                Deadline.after(PROBE)).join();

        assertArrayEquals(new byte[] {(byte) mine.context.controlEndpoint().port(), 4, 2}, reply);
    }

    @Test
    void transportRequest_peerHandlerFails_requesterGetsItsMessageAsARemoteFailure() {
        StubProvider mine = new StubProvider("verbs", 1);
        StubProvider theirs = new StubProvider("verbs", 1);
        manager(mine);
        RdmaManager peer = manager(theirs);
        theirs.context.control().onRequest((from, payload) -> {
            throw new IllegalStateException("peer queue pair already exists");
        });

        CompletionException e = assertThrows(CompletionException.class, () -> mine.context.control()
                .request(peer.controlEndpoint(), new byte[1], Deadline.after(PROBE)).join());

        TransportException te = assertInstanceOf(TransportException.class, e.getCause());
        assertEquals(TransportException.Kind.REMOTE_FAILURE, te.kind());
        assertTrue(te.getMessage().contains("peer queue pair already exists"), te.getMessage());
    }

    @Test
    void transportRequest_transportThePeerDoesNotRun_failsNamingIt() {
        StubProvider mine = new StubProvider("verbs", 1);
        manager(mine);
        RdmaManager peer = manager(new StubProvider("tcp", 1));

        CompletionException e = assertThrows(CompletionException.class, () -> mine.context.control()
                .request(peer.controlEndpoint(), new byte[1], Deadline.after(PROBE)).join());

        assertTrue(e.getCause().getMessage().contains("no transport named verbs"), e.getCause().getMessage());
    }

    @Test
    void transportRequest_peerNeverAnswers_failsWithTimeoutAtTheDeadline() throws IOException {
        StubProvider mine = new StubProvider("verbs", 1);
        manager(mine);
        try (ServerSocket silent = new ServerSocket(0)) {
            Endpoint peer = new Endpoint("127.0.0.1", silent.getLocalPort());

            CompletionException e = assertThrows(CompletionException.class, () -> mine.context.control()
                    .request(peer, new byte[1], Deadline.after(Duration.ofMillis(200))).join());

            TransportException te = assertInstanceOf(TransportException.class, e.getCause());
            assertEquals(TransportException.Kind.TIMEOUT, te.kind());
            assertTrue(te.getMessage().contains(peer.toString()), te.getMessage());
        }
    }

    @Test
    void onRequest_secondHandlerForTheSameTransport_rejected() {
        StubProvider mine = new StubProvider("verbs", 1);
        manager(mine);
        mine.context.control().onRequest((from, payload) -> payload);

        assertThrows(IllegalStateException.class, () -> mine.context.control().onRequest((from, payload) -> payload));
    }
}
