package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;

import static io.rdma4j.transport.tcp.TcpTesting.SAFETY;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Once an op's future completed (timed out, cancelled), the transport no longer writes into the
 * caller's memory, and its connection is gone; a peer that trickles its reply cannot stretch the
 * op past its deadline.
 */
class TcpCancelTest {

    private static final int SIZE = 4096;
    /** Bytes of the local segment that hold a value nobody sends, checked afterwards. */
    private static final byte UNTOUCHED = 0x11;

    private TcpTesting.Instrumented requester;
    private RdmaRemoteBuffer someToken;
    private TcpTesting.Instrumented owner;
    private Arena arena;
    private MemorySegment local;

    @BeforeEach
    void start() {
        owner = TcpTesting.instrumented();
        requester = TcpTesting.instrumented();
        someToken = TcpTesting.await(owner.manager().allocate(SIZE)).remote();
        arena = Arena.ofShared();
        local = arena.allocate(SIZE, 8).fill(UNTOUCHED);
    }

    @AfterEach
    void stop() {
        requester.close();
        owner.close();
        arena.close();
    }

    @Test
    void read_thatTimesOut_leavesTheLocalSegmentUntouchedWhenThePeerAnswersLater() throws Exception {
        try (SlowPeer slow = new SlowPeer()) {
            RdmaRemoteBuffer token = TestTokens.pointingAt(someToken, slow.endpoint());

            Throwable failure = failureOf(requester.manager().read(token, local, Duration.ofMillis(300)));
            assertInstanceOf(RdmaTimeoutException.class, assertInstanceOf(RdmaSubmitException.class, failure).getCause());
            assertEquals(SIZE, slow.awaitRequest());
            slow.answer(); // the whole reply, after the requester gave up

            assertTrue(slow.closedByRequester(), "the timed-out connection stayed open");
            assertNoTransferRunning();
            assertUntouched();
        }
    }

    @Test
    void cancel_stopsTheTransferFreesItsConnectionAndLeavesTheLocalSegmentUntouched() throws Exception {
        try (SlowPeer slow = new SlowPeer()) {
            RemoteBufferRef ref = TokenRefs.refFor(TestTokens.pointingAt(someToken, slow.endpoint()), "tcp");
            CompletableFuture<Void> transfer = requester.transport().submit(
                    List.of(TransportOp.of(TransportOp.OpType.READ_INTO_LOCAL, local, ref)), Deadline.after(SAFETY));
            slow.awaitRequest(); // the transfer now waits for the reply

            assertTrue(transfer.cancel(true));

            assertThrows(CancellationException.class, transfer::join);
            assertTrue(slow.closedByRequester(), "the cancelled transfer's connection stayed open");
            slow.answer();
            assertNoTransferRunning();
            assertEquals(0, requester.transport().pool().idleCount(), "a cancelled connection went back to the pool");
            assertUntouched();
        }
    }

    @Test
    void failingTheFutureFromOutside_stopsTheTransferAsCancelDoes() throws Exception {
        try (SlowPeer slow = new SlowPeer()) {
            RemoteBufferRef ref = TokenRefs.refFor(TestTokens.pointingAt(someToken, slow.endpoint()), "tcp");
            CompletableFuture<Void> transfer = requester.transport().submit(
                    List.of(TransportOp.of(TransportOp.OpType.READ_INTO_LOCAL, local, ref)), Deadline.after(SAFETY));
            slow.awaitRequest();

            // What the manager's watchdog does to a transport that overran its deadline.
            assertTrue(transfer.completeExceptionally(new IllegalStateException("given up by the manager")));

            assertTrue(slow.closedByRequester(), "the abandoned transfer's connection stayed open");
            slow.answer();
            assertNoTransferRunning();
            assertUntouched();
        }
    }

    @Test
    void read_fromPeerTricklingItsReply_endsAtItsDeadline() throws Exception {
        try (SlowPeer slow = new SlowPeer()) {
            RdmaRemoteBuffer token = TestTokens.pointingAt(someToken, slow.endpoint());
            Duration timeout = Duration.ofSeconds(1);
            long start = System.nanoTime();
            CompletableFuture<Void> read = requester.manager().read(token, local, timeout);
            // One byte every 300 ms: the 4104-byte reply would take 20 minutes; a per-read socket
            // timeout of any length would never fire. The peer stops when the requester hangs up.
            long trickled = slow.trickle(Long.MAX_VALUE, 300);

            Throwable failure = failureOf(read);
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertInstanceOf(RdmaTimeoutException.class, assertInstanceOf(RdmaSubmitException.class, failure).getCause());
            assertTrue(trickled > 0, "the peer sent nothing before the requester hung up");
            // A bound, not a speed: the deadline plus generous slack for a loaded machine.
            assertTrue(took.compareTo(timeout.plusSeconds(3)) < 0, "a 1s read lasted " + took);
            assertNoTransferRunning();
            assertUntouched();
        }
    }

    private void assertNoTransferRunning() {
        // Left: the data endpoint's acceptor only.
        TcpTesting.awaitCondition("the requester's transfer threads end",
                () -> requester.transport().liveThreadCount() == 1);
        assertEquals(0, requester.transport().pool().checkedOutCount());
    }

    private void assertUntouched() {
        for (long i = 0; i < SIZE; i++) {
            byte b = local.get(ValueLayout.JAVA_BYTE, i);
            if (b != UNTOUCHED) {
                throw new AssertionError("byte " + i + " of the local segment changed to 0x"
                        + Integer.toHexString(b & 0xff) + " after its op completed");
            }
        }
    }
}
