package io.rdma4j.transport.tcp;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static io.rdma4j.transport.tcp.TcpTesting.SAFETY;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Nothing waits past its deadline, and nothing survives a failed or interrupted transfer. */
class TcpDeadlineTest {

    private RdmaManager owner;
    private TcpTesting.Instrumented requester;
    private RdmaRemoteBuffer realToken;
    private Arena arena;
    private MemorySegment local;

    @BeforeEach
    void start() {
        owner = TcpTesting.manager();
        requester = TcpTesting.instrumented();
        RdmaBuffer buffer = await(owner.allocate(4096));
        realToken = buffer.remote();
        arena = Arena.ofShared();
        local = arena.allocate(4096, 8);
    }

    @AfterEach
    void stop() {
        requester.close();
        owner.close();
        arena.close();
    }

    private static <T extends Throwable> T cause(Class<T> type, Throwable failure) {
        RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, failure);
        return assertInstanceOf(type, submit.getCause());
    }

    @Test
    void write_toPeerThatStopsAnswering_timesOutNamingPeerAndOp() throws Exception {
        try (SilentPeer silent = new SilentPeer()) {
            Endpoint endpoint = silent.endpoint();
            RdmaRemoteBuffer token = TestTokens.pointingAt(realToken, endpoint);

            Throwable failure = failureOf(requester.manager().write(token, local, Duration.ofSeconds(1)));

            RdmaTimeoutException e = cause(RdmaTimeoutException.class, failure);
            // "after 1s", give or take the rounding of what was left when the transport got the op
            assertTrue(e.getMessage().matches("tcp write of buffer " + token.id() + " to " + java.util.regex.Pattern.quote(
                    endpoint.toString()) + " timed out after [0-9.]+m?s"), e.getMessage());
        }
    }

    @Test
    void timeoutMessage_namesTheBudgetReadably() {
        assertEquals("2s", TcpTransport.format(Duration.ofNanos(1_999_700_000L)));
        assertEquals("1.5s", TcpTransport.format(Duration.ofMillis(1500)));
        assertEquals("250ms", TcpTransport.format(Duration.ofMillis(250)));
        assertEquals("3ms", TcpTransport.format(Duration.ofMillis(3)));
    }

    @Test
    void read_fromPeerThatStopsAnswering_timesOutAndDiscardsTheConnection() throws Exception {
        try (SilentPeer silent = new SilentPeer()) {
            RdmaRemoteBuffer token = TestTokens.pointingAt(realToken, silent.endpoint());

            Throwable failure = failureOf(requester.manager().read(token, local, Duration.ofMillis(500)));
            SocketChannel serverSide = silent.nextConnection();

            RdmaTimeoutException e = cause(RdmaTimeoutException.class, failure);
            assertTrue(e.getMessage().startsWith("tcp read of buffer " + token.id() + " from " + silent.endpoint()
                    + " timed out"), e.getMessage());
            assertTrue(SilentPeer.closedByOtherSide(serverSide, SAFETY), "the timed-out connection was not closed");
            assertEquals(0, requester.transport().pool().checkedOutCount());
            assertEquals(0, requester.transport().pool().idleCount(), "a timed-out connection went back to the pool");
        }
    }

    @Test
    void pipelinedBatch_toPeerThatStopsAnswering_timesOutNamingTheFirstOpAndDiscardsTheConnection() throws Exception {
        try (SilentPeer silent = new SilentPeer()) {
            RdmaRemoteBuffer token = TestTokens.pointingAt(realToken, silent.endpoint());
            io.rdma4j.RdmaAction batch = requester.manager().newAction();
            for (int i = 0; i < 64; i++) {
                batch.readInto(token.slice(8L * i, 8), local.asSlice(8L * i, 8));
            }

            Throwable failure = failureOf(batch.submit(Duration.ofMillis(500)));
            SocketChannel serverSide = silent.nextConnection();

            RdmaTimeoutException e = cause(RdmaTimeoutException.class, failure);
            assertTrue(e.getMessage().startsWith("tcp read of buffer " + token.id() + " from " + silent.endpoint()
                    + " timed out"), e.getMessage());
            assertTrue(e.getMessage().endsWith("(op 1 of 64)"), e.getMessage());
            assertTrue(SilentPeer.closedByOtherSide(serverSide, SAFETY), "the timed-out connection was not closed");
            assertEquals(0, requester.transport().pool().checkedOutCount());
            assertEquals(0, requester.transport().pool().idleCount(), "a timed-out connection went back to the pool");
        }
    }

    @Test
    void write_toPortNobodyListensOn_failsWithPeerUnreachable() throws IOException {
        Endpoint nobody;
        try (ServerSocketChannel probe = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            nobody = new Endpoint("127.0.0.1", ((InetSocketAddress) probe.getLocalAddress()).getPort());
        }
        RdmaRemoteBuffer token = TestTokens.pointingAt(realToken, nobody);

        Throwable failure = failureOf(requester.manager().write(token, local, Duration.ofSeconds(10)));

        PeerUnreachableException e = cause(PeerUnreachableException.class, failure);
        assertTrue(e.getMessage().contains("tcp write of buffer " + token.id() + " to " + nobody + " failed: cannot connect"),
                e.getMessage());
    }

    @Test
    void submit_withZeroTimeout_failsWithTimeoutWithoutConnecting() {
        Throwable failure = failureOf(requester.manager().write(realToken, local, Duration.ZERO));

        cause(RdmaTimeoutException.class, failure);
        assertEquals(0, requester.transport().pool().openedCount());
    }

    @Test
    void malformedTcpContext_failsBeforeAnythingIsSentWithAClearError() {
        RdmaRemoteBuffer token = TestTokens.withTcpContext(realToken, new byte[]{9, 9});

        Throwable failure = failureOf(requester.manager().write(token, local, Duration.ofSeconds(10)));

        IllegalArgumentException e = assertInstanceOf(IllegalArgumentException.class, failure);
        assertTrue(e.getMessage().contains("tcp context is malformed"), e.getMessage());
        assertEquals(0, requester.transport().pool().openedCount());
    }

    @Test
    void closeManager_withTransferInFlight_failsItAndEndsEveryThread() throws Exception {
        try (SilentPeer silent = new SilentPeer()) {
            RdmaRemoteBuffer token = TestTokens.pointingAt(realToken, silent.endpoint());
            CompletableFuture<Void> transfer = requester.manager().write(token, local, Duration.ofMinutes(5));
            SocketChannel serverSide = silent.nextConnection(); // the transfer is now blocked on it

            requester.manager().close();
            Throwable failure = failureOf(transfer);

            RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, failure);
            assertTrue(submit.getMessage().contains("closed"), submit.getMessage());
            assertTrue(SilentPeer.closedByOtherSide(serverSide, SAFETY));
            assertEquals(0, requester.transport().liveThreadCount(), "threads of the closed transport still run");
            assertEquals(0, requester.transport().pool().checkedOutCount());
        }
    }
}
