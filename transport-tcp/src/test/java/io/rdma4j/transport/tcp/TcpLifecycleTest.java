package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

import static io.rdma4j.transport.tcp.TcpTesting.MIB;
import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Connections are reused; close stops everything, once. */
class TcpLifecycleTest {

    @Test
    void secondTransfer_toTheSamePeer_reusesThePooledConnection() {
        try (RdmaManager owner = TcpTesting.manager();
             TcpTesting.Instrumented peer = TcpTesting.instrumented();
             Arena arena = Arena.ofShared()) {
            RdmaBuffer buffer = await(owner.allocate(3 * MIB));
            MemorySegment local = arena.allocate(buffer.byteSize(), 8);

            await(peer.manager().write(buffer.remote(), local, TRANSFER_TIMEOUT));
            await(peer.manager().read(buffer.remote(), local, TRANSFER_TIMEOUT));

            assertEquals(1, peer.transport().pool().openedCount());
            assertEquals(1, peer.transport().pool().idleCount(TestTokens.dataEndpoint(buffer.remote())));
        }
    }

    @Test
    void pooledConnection_toAPeerThatRestarted_isReplacedTransparently() {
        TcpTesting.Instrumented first = TcpTesting.instrumented();
        int port = first.transport().dataEndpoint().port();
        try (TcpTesting.Instrumented peer = TcpTesting.instrumented(); Arena arena = Arena.ofShared()) {
            MemorySegment local = arena.allocate(MIB, 8);
            await(peer.manager().write(await(first.manager().allocate(MIB)).remote(), local, TRANSFER_TIMEOUT));
            first.close(); // the pooled connection to it is now dead
            try (TcpTesting.Instrumented restarted = TcpTesting.instrumented("rdma.tcp.dataPort", String.valueOf(port))) {
                RdmaBuffer buffer = await(restarted.manager().allocate(MIB));
                Patterns.fill(local, 8);

                await(peer.manager().write(buffer.remote(), local, TRANSFER_TIMEOUT));

                assertEquals(-1, Patterns.mismatch(local, buffer.segment(), MIB));
                assertEquals(2, peer.transport().pool().openedCount(), "the stale connection was replaced once");
            }
        }
    }

    @Test
    void managerClose_afterParallelTransfers_endsEveryTransportThreadAndConnection() {
        TcpTesting.Instrumented owner = TcpTesting.instrumented("rdma.tcp.parallelism", "4");
        TcpTesting.Instrumented peer = TcpTesting.instrumented("rdma.tcp.parallelism", "4");
        try (Arena arena = Arena.ofShared()) {
            RdmaBuffer buffer = await(owner.manager().allocate(6 * MIB));
            MemorySegment local = arena.allocate(buffer.byteSize(), 8);
            await(peer.manager().write(buffer.remote(), local, TRANSFER_TIMEOUT));

            peer.close();
            owner.close();

            assertEquals(0, peer.transport().liveThreadCount());
            assertEquals(0, owner.transport().liveThreadCount());
            assertEquals(0, owner.transport().servedConnectionCount());
            assertEquals(0, peer.transport().pool().idleCount());
        }
    }

    @Test
    void close_calledAgain_isHarmless() {
        TcpTesting.Instrumented m = TcpTesting.instrumented();
        m.close();

        m.transport().close();
        m.transport().close();

        assertEquals(0, m.transport().liveThreadCount());
    }

    @Test
    void close_stopsTheDataEndpoint() throws IOException {
        TcpTesting.Instrumented m = TcpTesting.instrumented();
        InetSocketAddress data = new InetSocketAddress(m.transport().dataEndpoint().host(), m.transport().dataEndpoint().port());

        m.close();

        assertThrows(IOException.class, () -> {
            try (Socket s = new Socket()) {
                s.connect(data, 10_000);
            }
        });
    }

    @Test
    void submit_afterClose_failsAtOnceWithAClearError() {
        try (RdmaManager owner = TcpTesting.manager(); Arena arena = Arena.ofShared()) {
            RdmaBuffer buffer = await(owner.allocate(16));
            TcpTesting.Instrumented closed = TcpTesting.instrumented();
            closed.close();

            Throwable failure = failureOf(closed.transport().submit(List.of(TransportOp.of(TransportOp.OpType.WRITE_FROM_LOCAL,
                    arena.allocate(16), TokenRefs.refFor(buffer.remote(), "tcp"))), Deadline.after(Duration.ofSeconds(5))));

            TransportException e = assertInstanceOf(TransportException.class, failure);
            assertEquals(TransportException.Kind.INTERNAL, e.kind());
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void submit_ofThreadConfinedLocalSegment_failsWithLocalAccessSayingWhy() {
        // The manager already refuses such segments; the transport defends itself too.
        try (RdmaManager owner = TcpTesting.manager();
             TcpTesting.Instrumented peer = TcpTesting.instrumented();
             Arena confined = Arena.ofConfined()) {
            RdmaBuffer buffer = await(owner.allocate(16));
            TransportOp op = TransportOp.of(TransportOp.OpType.WRITE_FROM_LOCAL, confined.allocate(16), TokenRefs.refFor(buffer.remote(), "tcp"));

            Throwable failure = failureOf(peer.transport().submit(List.of(op), Deadline.after(TRANSFER_TIMEOUT)));

            TransportException e = assertInstanceOf(TransportException.class, failure);
            assertEquals(TransportException.Kind.LOCAL_ACCESS, e.kind());
            assertTrue(e.getMessage().contains("confined"), e.getMessage());
        }
    }
}
