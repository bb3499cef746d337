package io.rdma4j.transport.tcp;

import io.rdma4j.testing.Signals;
import io.rdma4j.PeerReadiness;
import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.rdma4j.transport.tcp.TcpTesting.MIB;
import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A second JVM (same java, same class path) owns the buffer. */
class TcpCrossProcessTest {

    @Test
    void write_thenReadBack_acrossProcesses_movesExactBytes() throws Exception {
        long size = 3 * MIB + 1;
        try (PeerProcess owner = PeerProcess.start(List.of(), "size=" + size, "rdma.tcp.maxChunkMiB=1");
             TcpTesting.Instrumented requester = TcpTesting.instrumented("rdma.tcp.parallelism", "2");
             Arena arena = Arena.ofShared()) {
            MemorySegment source = arena.allocate(size, 8);
            Patterns.fill(source, 42);
            MemorySegment back = arena.allocate(size, 8);

            await(requester.manager().write(owner.token(), source, TRANSFER_TIMEOUT));
            String ownerCrc = owner.command("crc");
            await(requester.manager().read(owner.token(), back, TRANSFER_TIMEOUT));

            assertEquals("CRC " + Long.toHexString(Patterns.crc(source)), ownerCrc);
            assertEquals(-1, Patterns.mismatch(source, back, size));
        }
    }

    @Test
    void peerKilledMidTransfer_opFailsAsUnreachable_andNothingLeaks() throws Exception {
        long size = 64 * MIB; // far more than socket buffers hold: the write cannot finish while the peer is stopped
        try (PeerProcess owner = PeerProcess.start(List.of(), "size=" + size);
             TcpTesting.Instrumented requester = TcpTesting.instrumented("rdma.tcp.parallelism", "2");
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token = owner.token();
            Endpoint data = TestTokens.dataEndpoint(token);
            MemorySegment source = arena.allocate(size, 8);
            int threadsBefore = requester.transport().liveThreadCount();
            Signals.stop(owner.pid());

            CompletableFuture<Void> transfer = requester.manager().write(token, source, Duration.ofMinutes(2));
            TcpTesting.awaitCondition("the transfer holds a connection to the frozen peer",
                    () -> requester.transport().pool().checkedOutCount() > 0);
            owner.process().destroyForcibly();
            Throwable failure = failureOf(transfer);

            RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, failure);
            PeerUnreachableException e = assertInstanceOf(PeerUnreachableException.class, submit.getCause());
            assertTrue(e.getMessage().startsWith("tcp write of buffer " + token.id() + " to " + data + " failed"),
                    e.getMessage());
            assertEquals(0, requester.transport().pool().checkedOutCount(), "connections still checked out");
            assertEquals(0, requester.transport().pool().idleCount(), "broken connections went back to the pool");
            assertEquals(threadsBefore, requester.transport().liveThreadCount(), "transfer threads outlived the transfer");
        }
    }

    @Test
    void controlPlane_acrossProcesses_readinessAnswers_andRemoteReleaseReachesTheOwner() throws Exception {
        try (TcpTesting.Instrumented requester = TcpTesting.instrumented();
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token;
            PeerReadiness afterExit;
            try (PeerProcess owner = PeerProcess.start(List.of(), "size=4096")) {
                token = owner.token();
                PeerReadiness ready = requester.manager()
                        .probeReadiness(List.of(token.owner()), TRANSFER_TIMEOUT).join().get(token.owner());
                assertEquals(PeerReadiness.State.READY, ready.state(), ready.toString());

                await(requester.manager().release(token));

                Throwable refused = failureOf(requester.manager().read(token, arena.allocate(4096), TRANSFER_TIMEOUT));
                RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, refused);
                assertInstanceOf(RemoteAccessException.class, submit.getCause());
                assertTrue(submit.getMessage().contains("denied: no such buffer, released, or wrong access key"), submit.getMessage());
            }
            afterExit = requester.manager().probeReadiness(List.of(token.owner()), Duration.ofMillis(300))
                    .join().get(token.owner());

            assertEquals(PeerReadiness.State.UNREACHABLE, afterExit.state(), afterExit.toString());
        }
    }

}
