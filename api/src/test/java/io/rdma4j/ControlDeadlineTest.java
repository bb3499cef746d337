package io.rdma4j;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportException;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import io.rdma4j.testing.TricklingPeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Every control exchange ends by its overall deadline, plus a small slack, whatever the peer does.
 * The peers here are real sockets that answer one byte every 300 ms and never finish: with only a
 * per-read socket timeout, each exchange below would run for as long as the peer liked.
 */
class ControlDeadlineTest {

    private static final Duration TRICKLE = Duration.ofMillis(300);
    private static final Duration DEADLINE = Duration.ofSeconds(2);
    /** How late past its deadline an exchange may end: scheduling on a loaded 2-core CI machine. */
    private static final Duration SLACK = Duration.ofSeconds(3);

    @RegisterExtension
    final Managers managers = new Managers();

    /** The outcome of {@code f}, which must be there by the deadline plus the slack. */
    private static Throwable failureByTheDeadline(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(DEADLINE.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
            return fail("completed normally");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return fail("still running " + SLACK + " after its " + DEADLINE + " deadline");
        }
    }

    private static RdmaRemoteBuffer tokenOwnedBy(Endpoint owner) {
        return new RdmaRemoteBuffer(new byte[16], owner, 3, 64, new byte[16], Map.of("stub", new byte[8]));
    }

    @Test
    void release_ownerTricklingItsReply_failsWithTimeoutByTheDeadline() throws Exception {
        RdmaManager manager = managers.start(new StubProvider("stub", 1));
        try (TricklingPeer owner = TricklingPeer.answeringSlowly(TRICKLE)) {

            Throwable failure = failureByTheDeadline(manager.release(tokenOwnedBy(owner.endpoint()), DEADLINE));

            assertInstanceOf(RdmaTimeoutException.class, failure, failure.toString());
            assertTrue(failure.getMessage().contains(owner.endpoint().toString()), failure.getMessage());
            assertEquals(0, owner.firstByteSent().getCount(), "the peer did start answering");
        }
    }

    @Test
    void release_ownerNeverReadingTheRequest_failsWithTimeoutByTheDeadline() throws Exception {
        RdmaManager manager = managers.start(new StubProvider("stub", 1));
        try (TricklingPeer owner = TricklingPeer.neverReading(TRICKLE)) {

            Throwable failure = failureByTheDeadline(manager.release(tokenOwnedBy(owner.endpoint()), DEADLINE));

            assertInstanceOf(RdmaTimeoutException.class, failure, failure.toString());
        }
    }

    @Test
    void probeReadiness_peerTricklingItsReply_isUnreachableByTheDeadline() throws Exception {
        RdmaManager manager = managers.start(new StubProvider("stub", 1));
        try (TricklingPeer peer = TricklingPeer.answeringSlowly(TRICKLE)) {

            Map<Endpoint, PeerReadiness> answers = manager.probeReadiness(List.of(peer.endpoint()), DEADLINE)
                    .get(DEADLINE.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);

            PeerReadiness answer = answers.get(peer.endpoint());
            assertEquals(PeerReadiness.State.UNREACHABLE, answer.state());
            assertTrue(answer.detail().contains("timed out"), answer.detail());
        }
    }

    @Test
    void transportRequest_peerTricklingItsReply_failsWithTimeoutByTheDeadline() throws Exception {
        StubProvider mine = new StubProvider("verbs", 1);
        managers.start(mine);
        try (TricklingPeer peer = TricklingPeer.answeringSlowly(TRICKLE)) {

            Throwable failure = failureByTheDeadline(mine.context.control()
                    .request(peer.endpoint(), new byte[] {1, 2, 3}, Deadline.after(DEADLINE)));

            TransportException te = assertInstanceOf(TransportException.class, failure, failure.toString());
            assertEquals(TransportException.Kind.TIMEOUT, te.kind());
            assertTrue(te.getMessage().contains(peer.endpoint().toString()), te.getMessage());
        }
    }

    @Test
    void transportRequest_largePayloadToAPeerThatNeverReads_failsWithTimeoutByTheDeadline() throws Exception {
        StubProvider mine = new StubProvider("verbs", 1);
        managers.start(mine);
        try (TricklingPeer peer = TricklingPeer.neverReading(TRICKLE)) {

            Throwable failure = failureByTheDeadline(mine.context.control()
                    .request(peer.endpoint(), new byte[1 << 20], Deadline.after(DEADLINE)));

            TransportException te = assertInstanceOf(TransportException.class, failure, failure.toString());
            assertEquals(TransportException.Kind.TIMEOUT, te.kind());
        }
    }

    @Test
    void release_afterATimedOutExchange_theNextOneToAHealthyOwnerSucceeds() throws Exception {
        RdmaManager manager = managers.start(new StubProvider("stub", 1));
        RdmaManager owner = managers.start(new StubProvider("stub", 1));
        RdmaRemoteBuffer healthy = owner.register(managers.arena().allocate(64)).join();
        try (TricklingPeer slow = TricklingPeer.answeringSlowly(TRICKLE)) {
            assertInstanceOf(RdmaTimeoutException.class, failureByTheDeadline(
                    manager.release(tokenOwnedBy(slow.endpoint()), DEADLINE)));
        }

        manager.release(healthy, DEADLINE).get(DEADLINE.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);

        assertEquals(0, owner.registeredBufferCount());
    }
}
