package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;

import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Small ops of one action to one peer are pipelined on one connection (requests in rounds, replies
 * in order): each op still moves exactly its own bytes, in order, and a refused op is named.
 */
class TcpPipelineTest {

    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        arena.close();
    }

    private <T extends AutoCloseable> T closing(T resource) {
        toClose.add(resource);
        return resource;
    }

    /** {@code ops} writes of {@code size} bytes each at consecutive offsets, then as many reads back; 1024 x 8 KiB spans many rounds. */
    @ParameterizedTest(name = "{0} ops of {1} bytes")
    @CsvSource({"2, 8", "64, 8", "64, 1000", "1024, 8", "1024, 8192"})
    void batchOfSmallWrites_thenOfReads_eachOpMovesItsOwnBytes(int ops, int size) {
        RdmaManager owner = closing(TcpTesting.manager());
        RdmaManager holder = closing(TcpTesting.manager());
        RdmaBuffer buffer = closing(await(owner.allocate((long) ops * size)));
        MemorySegment source = arena.allocate((long) ops * size, 8);
        Patterns.fill(source, ops * 31L + size);
        MemorySegment back = arena.allocate((long) ops * size, 8);

        RdmaAction writes = holder.newAction();
        RdmaAction reads = holder.newAction();
        for (int i = 0; i < ops; i++) {
            writes.writeFrom(buffer.remote().slice((long) i * size, size), source.asSlice((long) i * size, size));
            reads.readInto(buffer.remote().slice((long) i * size, size), back.asSlice((long) i * size, size));
        }
        writes.submit(TRANSFER_TIMEOUT).join();
        reads.submit(TRANSFER_TIMEOUT).join();

        assertEquals(-1, Patterns.mismatch(source, buffer.segment(), (long) ops * size), "the owner's memory differs");
        assertEquals(-1, Patterns.mismatch(source, back, (long) ops * size), "the read-back differs");
    }

    @Test
    void pipelinedOpsOnOneRange_runInTheActionsOrder() {
        RdmaManager owner = closing(TcpTesting.manager());
        RdmaManager holder = closing(TcpTesting.manager());
        RdmaBuffer buffer = closing(await(owner.allocate(8)));
        MemorySegment[] seen = new MemorySegment[4];
        RdmaAction action = holder.newAction();
        for (int i = 0; i < seen.length; i++) {
            action.writeFrom(buffer.remote(), arena.allocate(8).fill((byte) (i + 1)));
            seen[i] = arena.allocate(8);
            action.readInto(buffer.remote(), seen[i]);
        }

        action.submit(TRANSFER_TIMEOUT).join();

        for (int i = 0; i < seen.length; i++) {
            assertEquals(i + 1, seen[i].get(ValueLayout.JAVA_BYTE, 7), "read " + i + " saw another write than the one before it");
        }
    }

    @Test
    void refusedOpInTheMiddleOfABatch_failsTheActionNamingThatOp_andTheConnectionServesTheNextBatch() {
        RdmaManager owner = closing(TcpTesting.manager());
        RdmaManager holder = closing(TcpTesting.manager());
        RdmaBuffer live = closing(await(owner.allocate(64 * 8)));
        RdmaBuffer released = await(owner.allocate(8));
        released.close();
        RdmaAction action = holder.newAction();
        for (int i = 0; i < 64; i++) {
            action.readInto(i == 30 ? released.remote() : live.remote().slice(i * 8L, 8), arena.allocate(8));
        }

        CompletionException e = assertThrows(CompletionException.class, () -> action.submit(TRANSFER_TIMEOUT).join());

        RdmaSubmitException se = assertInstanceOf(RdmaSubmitException.class, e.getCause());
        assertInstanceOf(RemoteAccessException.class, se.getCause());
        assertTrue(se.getCause().getMessage().contains("(op 31 of 64)"), se.getCause().getMessage());
        live.segment().fill((byte) 9);
        MemorySegment back = arena.allocate(8);
        RdmaAction next = holder.newAction();
        for (int i = 0; i < 64; i++) {
            next.readInto(live.remote().slice(i * 8L, 8), i == 63 ? back : arena.allocate(8));
        }
        next.submit(TRANSFER_TIMEOUT).join();
        assertEquals(9, back.get(ValueLayout.JAVA_BYTE, 0));
    }

    /** The wire: requests sent together before any reply are each answered, in order, a refusal in its place. */
    @Test
    void requestsPipelinedOnOneConnection_areAnsweredInOrder_withARefusalInItsPlace() throws IOException {
        try (TcpTesting.Instrumented owner = TcpTesting.instrumented()) {
            RdmaBuffer buffer = await(owner.manager().allocate(64));
            Endpoint data = TestTokens.dataEndpoint(buffer.remote());
            byte[] key = TestTokens.accessKey(buffer.remote());
            byte[] wrongKey = key.clone();
            wrongKey[0] ^= 1;
            byte[] incarnation = TestTokens.incarnation(buffer.remote());
            byte[] payload = {1, 2, 3, 4, 5, 6, 7, 8};
            ByteArrayOutputStream round = new ByteArrayOutputStream();
            round.writeBytes(RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, incarnation, 8, 8, payload));
            round.writeBytes(RawDataClient.request(RawDataClient.READ, buffer.id(), wrongKey, incarnation, 8, 8, new byte[0]));
            round.writeBytes(RawDataClient.request(RawDataClient.READ, buffer.id(), key, incarnation, 8, 8, new byte[0]));

            try (RawDataClient client = new RawDataClient(data)) {
                client.send(round.toByteArray());

                assertEquals(RawDataClient.OK, client.reply().type());
                RawDataClient.Reply refused = client.reply();
                assertEquals(RawDataClient.ERROR, refused.type());
                assertEquals(1, refused.code(), refused.text());
                RawDataClient.Reply data8 = client.reply();
                assertEquals(RawDataClient.DATA, data8.type());
                assertArrayEquals(payload, data8.body());
            }
        }
    }
    /**
     * The owner checks every request of a connection on its own: one it served on a buffer says
     * nothing about the next one on that buffer (a wrong key, a range outside it, the buffer
     * released meanwhile are each refused in place, and the connection serves on).
     */
    @Test
    void aRequestAfterOneServedOnTheSameBuffer_isCheckedAgain_keyRangeAndRelease() throws IOException {
        try (TcpTesting.Instrumented owner = TcpTesting.instrumented()) {
            RdmaBuffer buffer = await(owner.manager().allocate(64));
            RdmaBuffer other = await(owner.manager().allocate(64));
            Endpoint data = TestTokens.dataEndpoint(buffer.remote());
            byte[] key = TestTokens.accessKey(buffer.remote());
            byte[] wrongKey = key.clone();
            wrongKey[15] ^= 1;
            byte[] incarnation = TestTokens.incarnation(buffer.remote());
            byte[] payload = {1, 2, 3, 4, 5, 6, 7, 8};
            try (RawDataClient client = new RawDataClient(data)) {
                ByteArrayOutputStream round = new ByteArrayOutputStream();
                round.writeBytes(RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, incarnation, 0, 8, payload));
                round.writeBytes(RawDataClient.request(RawDataClient.WRITE, buffer.id(), wrongKey, incarnation, 8, 8, payload));
                round.writeBytes(RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, incarnation, 60, 8, payload));
                round.writeBytes(RawDataClient.request(RawDataClient.WRITE, other.id(), key, incarnation, 0, 8, payload));
                round.writeBytes(RawDataClient.request(RawDataClient.WRITE, buffer.id(), key, incarnation, 16, 8, payload));
                client.send(round.toByteArray());

                assertEquals(RawDataClient.OK, client.reply().type());
                assertRefused(client.reply(), 1, "a wrong key after a served request");
                assertRefused(client.reply(), 3, "a range outside the buffer after a served request");
                assertRefused(client.reply(), 1, "another buffer's id with this buffer's key");
                assertEquals(RawDataClient.OK, client.reply().type());
                assertEquals(8, buffer.segment().get(ValueLayout.JAVA_BYTE, 23));
                assertEquals(0, buffer.segment().get(ValueLayout.JAVA_BYTE, 15), "the refused write landed");

                buffer.close(); // released between two requests of the connection
                client.write(buffer.id(), key, incarnation, 24, payload);
                assertRefused(client.reply(), 1, "a write to the buffer released since the last request");
            }
        }
    }

    private static void assertRefused(RawDataClient.Reply reply, int code, String what) {
        assertEquals(RawDataClient.ERROR, reply.type(), what + ": not refused");
        assertEquals(code, reply.code(), what + ": " + reply.text());
    }
}
