package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static io.rdma4j.transport.tcp.TcpTesting.failureOf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The owner checks every request; refusals come back as clear errors and change nothing else. */
class TcpRemoteAccessTest {

    private static final long SIZE = 64 * 1024;

    private RdmaManager owner;
    private TcpTesting.Instrumented peer;
    private RdmaBuffer buffer;
    private Arena arena;
    private MemorySegment local;

    @BeforeEach
    void start() {
        owner = TcpTesting.manager();
        peer = TcpTesting.instrumented();
        buffer = await(owner.allocate(SIZE));
        Patterns.fill(buffer.segment(), 5);
        arena = Arena.ofShared();
        local = arena.allocate(SIZE, 8);
    }

    @AfterEach
    void stop() {
        peer.close();
        owner.close();
        arena.close();
    }

    private static RemoteAccessException remoteAccess(Throwable failure) {
        RdmaSubmitException submit = assertInstanceOf(RdmaSubmitException.class, failure);
        return assertInstanceOf(RemoteAccessException.class, submit.getCause());
    }

    @Test
    void write_toReleasedBuffer_failsWithRemoteAccessSayingReleased() {
        RdmaRemoteBuffer token = buffer.remote();
        buffer.close();

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().write(token, local, TRANSFER_TIMEOUT)));

        assertTrue(e.getMessage().contains("tcp write of buffer " + token.id()), e.getMessage());
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    @Test
    void read_fromReleasedBuffer_failsWithRemoteAccessSayingReleased() {
        RdmaRemoteBuffer token = buffer.remote();
        buffer.close();

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().read(token, local, TRANSFER_TIMEOUT)));

        assertTrue(e.getMessage().contains("tcp read of buffer " + token.id()), e.getMessage());
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    @Test
    void write_withWrongAccessKey_isRefusedAndLeavesTheBufferUnchanged() {
        RdmaRemoteBuffer forged = TestTokens.withFlippedKeyByte(buffer.remote());
        Patterns.fill(local, 99);

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().write(forged, local, TRANSFER_TIMEOUT)));

        assertTrue(e.getMessage().contains("wrong access key"), e.getMessage());
        MemorySegment expected = arena.allocate(SIZE, 8);
        Patterns.fill(expected, 5);
        assertEquals(-1, Patterns.mismatch(expected, buffer.segment(), SIZE), "a refused write changed the buffer");
    }

    @Test
    void action_whoseFirstOpIsRefused_doesNotAttemptTheLaterOps() {
        RdmaBuffer released = await(owner.allocate(SIZE));
        RdmaRemoteBuffer releasedToken = released.remote();
        released.close();
        Patterns.fill(local, 77);

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().newAction()
                .writeFrom(releasedToken, local).writeFrom(buffer.remote(), local).submit(TRANSFER_TIMEOUT)));

        assertTrue(e.getMessage().contains("(op 1 of 2)"), e.getMessage());
        MemorySegment expected = arena.allocate(SIZE, 8);
        Patterns.fill(expected, 5);
        assertEquals(-1, Patterns.mismatch(expected, buffer.segment(), SIZE), "the second op ran after the first failed");
    }

    @Test
    void wrongAccessKey_thenValidRequest_isServedOnTheSamePooledConnection() {
        RdmaRemoteBuffer forged = TestTokens.withFlippedKeyByte(buffer.remote());
        failureOf(peer.manager().read(forged, local, TRANSFER_TIMEOUT));

        await(peer.manager().read(buffer.remote(), local, TRANSFER_TIMEOUT));

        assertEquals(-1, Patterns.mismatch(buffer.segment(), local, SIZE));
        assertEquals(1, peer.transport().pool().openedCount(), "the refusal must not cost the connection");
    }

    /**
     * A small read takes its reply's preamble and payload in one system call (up to the payload's
     * length): a refusal whose text is longer (8 bytes) or shorter (the largest small read) than the
     * payload asked for arrives whole, and the connection stays in step.
     */
    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(ints = {8, TcpConnection.SMALL_READ_BYTES})
    void smallRead_withWrongAccessKey_isRefusedAndTheConnectionStaysInStep(int length) {
        RdmaRemoteBuffer forged = TestTokens.withFlippedKeyByte(buffer.remote()).slice(0, length);
        MemorySegment target = local.asSlice(0, length).fill((byte) 0x77);

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().read(forged, target, TRANSFER_TIMEOUT)));
        MemorySegment untouched = arena.allocate(length).fill((byte) 0x77);
        long touched = Patterns.mismatch(untouched, target, length);
        await(peer.manager().read(buffer.remote().slice(0, length), target, TRANSFER_TIMEOUT));

        assertTrue(e.getMessage().contains("denied: no such buffer, released, or wrong access key"), e.getMessage());
        assertEquals(-1, touched, "the refusal's bytes reached the caller's memory");
        assertEquals(-1, Patterns.mismatch(buffer.segment(), target, length));
        assertEquals(1, peer.transport().pool().openedCount(), "the refusal must not cost the connection");
    }

    @Test
    void read_ofCallerOwnedMemoryClosedWithoutRelease_isRefusedCleanly() {
        Arena careless = Arena.ofShared();
        MemorySegment registered = careless.allocate(SIZE, 8);
        RdmaRemoteBuffer token = await(owner.register(registered));
        careless.close(); // contract broken: closed before release

        RemoteAccessException e = remoteAccess(failureOf(peer.manager().read(token, local, TRANSFER_TIMEOUT)));

        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        await(peer.manager().read(buffer.remote(), local, TRANSFER_TIMEOUT)); // and the owner still serves
    }

    @Test
    void unknownBufferId_isRefusedExactlyLikeAWrongKey() throws IOException {
        Endpoint data = TestTokens.dataEndpoint(buffer.remote());
        try (RawDataClient raw = new RawDataClient(data)) {
            raw.read(1_000_000, TestTokens.accessKey(buffer.remote()), TestTokens.incarnation(buffer.remote()), 0, 1);

            RawDataClient.Reply reply = raw.reply();

            assertEquals(RawDataClient.ERROR, reply.type());
            assertEquals(1, reply.code());
            assertEquals("access to buffer 1000000 denied: no such buffer, released, or wrong access key", reply.text());
        }
    }

    @Test
    void readBeyondTheBuffer_isRefusedAndTheConnectionStaysUsable() throws IOException {
        Endpoint data = TestTokens.dataEndpoint(buffer.remote());
        byte[] key = TestTokens.accessKey(buffer.remote());
        try (RawDataClient raw = new RawDataClient(data)) {
            raw.read(buffer.id(), key, TestTokens.incarnation(buffer.remote()), SIZE - 1, 2);
            RawDataClient.Reply refused = raw.reply();
            raw.read(buffer.id(), key, TestTokens.incarnation(buffer.remote()), SIZE - 4, 4);
            RawDataClient.Reply served = raw.reply();

            assertEquals(RawDataClient.ERROR, refused.type());
            assertEquals(3, refused.code());
            assertTrue(refused.text().contains("outside buffer " + buffer.id()), refused.text());
            assertEquals(RawDataClient.DATA, served.type());
            byte[] expected = new byte[4];
            MemorySegment.copy(buffer.segment(), java.lang.foreign.ValueLayout.JAVA_BYTE, SIZE - 4, expected, 0, 4);
            assertArrayEquals(expected, served.body());
        }
    }

    @Test
    void rangeThatOverflowsALong_isRefusedNotWrapped() throws IOException {
        Endpoint data = TestTokens.dataEndpoint(buffer.remote());
        try (RawDataClient raw = new RawDataClient(data)) {
            raw.read(buffer.id(), TestTokens.accessKey(buffer.remote()), TestTokens.incarnation(buffer.remote()), Long.MAX_VALUE - 1, 16);

            RawDataClient.Reply reply = raw.reply();

            assertEquals(RawDataClient.ERROR, reply.type());
            assertEquals(3, reply.code());
        }
    }

    @Test
    void refusedWrite_payloadIsConsumedAndTheNextRequestIsServed() throws IOException {
        Endpoint data = TestTokens.dataEndpoint(buffer.remote());
        byte[] key = TestTokens.accessKey(buffer.remote());
        byte[] badKey = key.clone();
        badKey[0] ^= 1;
        byte[] payload = new byte[100_000];
        Arrays.fill(payload, (byte) 0x7e);
        try (RawDataClient raw = new RawDataClient(data)) {
            raw.write(buffer.id(), badKey, TestTokens.incarnation(buffer.remote()), 0, payload);
            RawDataClient.Reply refused = raw.reply();
            raw.write(buffer.id(), key, TestTokens.incarnation(buffer.remote()), 0, new byte[]{1, 2, 3});
            RawDataClient.Reply ok = raw.reply();

            assertEquals(RawDataClient.ERROR, refused.type());
            assertEquals(1, refused.code());
            assertEquals(RawDataClient.OK, ok.type());
            assertEquals(0, ok.body().length);
            assertEquals(1, buffer.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
            assertEquals(3, buffer.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 2));
        }
    }
    /**
     * On the wire, whatever a token claims: a WRITE into a read-only registration, right after a
     * READ of it on the same connection (which the server then answers without a lookup), is
     * refused with code 8, its payload consumed, no byte changed, and the connection serves on.
     */
    @ParameterizedTest
    @ValueSource(ints = {3, 60_000})
    void writeIntoAReadOnlyRegistration_isRefusedOnTheWire_andTheConnectionServesOn(int length) throws IOException {
        MemorySegment mine = arena.allocate(SIZE, 8);
        Patterns.fill(mine, 6);
        RdmaRemoteBuffer readOnly = await(owner.register(mine.asReadOnly()));
        byte[] key = TestTokens.accessKey(readOnly);
        byte[] incarnation = TestTokens.incarnation(readOnly);
        byte[] payload = new byte[length];
        Arrays.fill(payload, (byte) 0x7e);
        try (RawDataClient raw = new RawDataClient(TestTokens.dataEndpoint(readOnly))) {
            raw.read(readOnly.id(), key, incarnation, 0, 4);
            RawDataClient.Reply read = raw.reply();
            raw.write(readOnly.id(), key, incarnation, 0, payload);
            RawDataClient.Reply refused = raw.reply();
            raw.write(buffer.id(), TestTokens.accessKey(buffer.remote()), TestTokens.incarnation(buffer.remote()), 0,
                    new byte[]{1, 2, 3});
            RawDataClient.Reply ok = raw.reply();

            assertEquals(RawDataClient.DATA, read.type());
            assertEquals(RawDataClient.ERROR, refused.type());
            assertEquals(8, refused.code());
            assertEquals("buffer " + readOnly.id() + " is read-only: its owner registered it without remote write access, "
                    + "and refused the write (nothing was written)", refused.text());
            assertEquals(-1, io.rdma4j.testing.DataPattern.mismatch(mine, 6), "no byte of the read-only buffer changed");
            assertEquals(RawDataClient.OK, ok.type());
            assertEquals(3, buffer.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 2));
        }
    }
}
