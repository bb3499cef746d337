package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Malformed input on the data port closes only the connection that sent it: the endpoint keeps
 * serving connections that were already open and new transfers.
 */
class TcpDataEndpointTest {

    private TcpTesting.Instrumented owner;
    private RdmaManager peer;
    private RdmaBuffer buffer;
    private Endpoint data;
    private byte[] key;
    private RawDataClient bystander;
    private Arena arena;

    @BeforeEach
    void start() throws IOException {
        owner = TcpTesting.instrumented();
        peer = TcpTesting.manager();
        buffer = await(owner.manager().allocate(MIB_PLUS_ONE));
        Patterns.fill(buffer.segment(), 3);
        data = TestTokens.dataEndpoint(buffer.remote());
        key = TestTokens.accessKey(buffer.remote());
        bystander = new RawDataClient(data); // opened before the bad input, must stay served
        arena = Arena.ofShared();
    }

    private static final long MIB_PLUS_ONE = (1 << 20) + 1;

    @AfterEach
    void stop() throws IOException {
        bystander.close();
        peer.close();
        owner.close();
        arena.close();
    }

    /** The endpoint still serves the connection opened earlier and a whole new transfer. */
    private void assertStillServing() throws IOException {
        bystander.read(buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, 8);
        RawDataClient.Reply reply = bystander.reply();
        assertEquals(RawDataClient.DATA, reply.type());
        assertEquals(8, reply.body().length);

        MemorySegment local = arena.allocate(buffer.byteSize(), 8);
        await(peer.read(buffer.remote(), local, TRANSFER_TIMEOUT));
        assertEquals(-1, Patterns.mismatch(buffer.segment(), local, buffer.byteSize()));
    }

    @Test
    void garbage_isAnsweredWithBadRequestAndItsConnectionClosed() throws IOException {
        try (RawDataClient attacker = new RawDataClient(data)) {
            attacker.send("GET / HTTP/1.1\r\nHost: example\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

            RawDataClient.Reply reply = attacker.reply();

            assertEquals(RawDataClient.ERROR, reply.type());
            assertEquals(5, reply.code());
            assertTrue(reply.text().contains("malformed frame: bad magic"), reply.text());
            assertTrue(attacker.closedByServer());
        }
        assertStillServing();
    }

    @Test
    void truncatedHeader_thenEndOfStream_closesOnlyThatConnection() throws IOException {
        try (RawDataClient attacker = new RawDataClient(data)) {
            byte[] request = RawDataClient.request(RawDataClient.READ, buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, 8, new byte[0]);
            attacker.send(Arrays.copyOf(request, 20));
            attacker.shutdownOutput();

            assertTrue(attacker.closedByServer());
        }
        assertStillServing();
    }

    @Test
    void truncatedWritePayload_closesOnlyThatConnectionAndReleasesTheBuffer() throws IOException {
        try (RawDataClient attacker = new RawDataClient(data)) {
            byte[] header = RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, 1000, new byte[1000]);
            attacker.send(Arrays.copyOf(header, 48 + 10)); // announces 1000 payload bytes, sends 10
            attacker.shutdownOutput();

            assertTrue(attacker.closedByServer());
        }
        assertStillServing();
    }

    @Test
    void absurdBodyLength_isRefusedWithoutAllocatingIt() throws IOException {
        try (RawDataClient attacker = new RawDataClient(data)) {
            byte[] request = RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, 8, new byte[8]);
            ByteBuffer.wrap(request).putInt(4, 0xffff_fff0); // body length ~4 GiB, over the 1 GiB cap

            attacker.send(request);
            RawDataClient.Reply reply = attacker.reply();

            assertEquals(RawDataClient.ERROR, reply.type());
            assertEquals(5, reply.code());
            assertTrue(attacker.closedByServer());
        }
        assertStillServing();
    }

    @Test
    void unknownRequestTypeOrVersion_closesThatConnection() throws IOException {
        for (int[] poke : new int[][]{{3, 0x7f}, {2, 9}}) { // type byte, version byte
            try (RawDataClient attacker = new RawDataClient(data)) {
                byte[] request = RawDataClient.request(RawDataClient.READ, buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, 8, new byte[0]);
                request[poke[0]] = (byte) poke[1];

                attacker.send(request);
                RawDataClient.Reply reply = attacker.reply();

                assertEquals(5, reply.code(), reply.text());
                assertTrue(attacker.closedByServer());
            }
        }
        assertStillServing();
    }

    @Test
    void requestStalledPastIdleTimeout_isClosedByTheServer() throws IOException {
        try (TcpTesting.Instrumented strict = TcpTesting.instrumented("rdma.tcp.idleTimeout", "300ms")) {
            RdmaBuffer b = await(strict.manager().allocate(4096));
            try (RawDataClient stalled = new RawDataClient(TestTokens.dataEndpoint(b.remote()))) {
                byte[] request = RawDataClient.request(RawDataClient.WRITE, b.id(), TestTokens.accessKey(b.remote()), TestTokens.incarnation(b.remote()), 0,
                        4096, new byte[4096]);
                stalled.send(Arrays.copyOf(request, 48 + 100)); // then nothing more

                assertTrue(stalled.closedByServer());
            }
        }
    }

    @Test
    void requestsComingOneAfterAnother_forLongerThanTheIdleTimeout_areAllServed() throws IOException {
        try (TcpTesting.Instrumented strict = TcpTesting.instrumented("rdma.tcp.idleTimeout", "500ms")) {
            RdmaBuffer b = await(strict.manager().allocate(8));
            try (RawDataClient busy = new RawDataClient(TestTokens.dataEndpoint(b.remote()))) {
                long end = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(2000);
                int served = 0;
                while (System.nanoTime() - end < 0 || served < 100) { // four idle timeouts of requests on one connection
                    busy.read(b.id(), TestTokens.accessKey(b.remote()), TestTokens.incarnation(b.remote()), 0, 8);
                    assertEquals(RawDataClient.DATA, busy.reply().type(), "request " + served);
                    served++;
                }
            }
        }
    }

    /** Failed before: the frame watch looked every watch period while any connection was open. */
    @Test
    void dataEndpoint_withAConnectionOpenBetweenRequests_armsNoWatchdogGuard() throws IOException {
        try (TcpTesting.Instrumented quiet = TcpTesting.instrumented("rdma.tcp.idleTimeout", "200ms")) {
            RdmaBuffer b = await(quiet.manager().allocate(8));
            try (RawDataClient pooled = new RawDataClient(TestTokens.dataEndpoint(b.remote()))) {
                pooled.read(b.id(), TestTokens.accessKey(b.remote()), TestTokens.incarnation(b.remote()), 0, 8);
                assertEquals(RawDataClient.DATA, pooled.reply().type());

                TcpTesting.awaitCondition("the data endpoint's frame watch ends with the last request, the connection still open",
                        () -> quiet.transport().servedConnectionCount() == 1 && !quiet.transport().frameWatchArmed());
                pooled.read(b.id(), TestTokens.accessKey(b.remote()), TestTokens.incarnation(b.remote()), 0, 8);
                assertEquals(RawDataClient.DATA, pooled.reply().type(), "served again");
            }
        }
    }

    @Test
    void dataEndpoint_withNoConnectionOpen_armsNoWatchdogGuard() throws IOException {
        try (TcpTesting.Instrumented quiet = TcpTesting.instrumented("rdma.tcp.idleTimeout", "200ms")) {
            RdmaBuffer b = await(quiet.manager().allocate(8));
            try (RawDataClient once = new RawDataClient(TestTokens.dataEndpoint(b.remote()))) {
                once.read(b.id(), TestTokens.accessKey(b.remote()), TestTokens.incarnation(b.remote()), 0, 8);
                assertEquals(RawDataClient.DATA, once.reply().type());
            }

            TcpTesting.awaitCondition("the data endpoint's frame watch ends with its last connection",
                    () -> quiet.transport().servedConnectionCount() == 0 && !quiet.transport().frameWatchArmed());
        }
    }

    @Test
    void closedConnections_leaveNoServingThreadBehind() throws IOException {
        try (RawDataClient attacker = new RawDataClient(data)) {
            attacker.send(new byte[]{1, 2, 3, 4, 5, 6, 7, 8, 9});
            assertTrue(attacker.closedByServer());
        }
        bystander.close();

        TcpTesting.awaitCondition("serving threads of closed connections end",
                () -> owner.transport().servedConnectionCount() == 0 && owner.transport().liveThreadCount() == 1);
    }
}
