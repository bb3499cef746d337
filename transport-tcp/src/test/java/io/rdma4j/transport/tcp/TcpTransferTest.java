package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.rdma4j.transport.tcp.TcpTesting.MIB;
import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Bytes move exactly, between two managers of one JVM and within one manager (1 MiB chunks). */
class TcpTransferTest {

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

    private MemorySegment pattern(long size, long seed) {
        MemorySegment s = arena.allocate(size, 8);
        Patterns.fill(s, seed);
        return s;
    }

    private RdmaBuffer allocate(RdmaManager owner, long size) {
        return closing(await(owner.allocate(size)));
    }

    @Nested
    class ThroughJoin {

        /** join() may carry the transfer on the joining thread, or find a pool thread already on it: the bytes are the same. */
        @ParameterizedTest(name = "{0} bytes, parallelism {1}")
        @org.junit.jupiter.params.provider.CsvSource({"8, 1", "65536, 1", "3145733, 1", "3145733, 3"})
        void submitJoin_writeThenRead_movesExactBytesEveryTime(long size, int parallelism) {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager("rdma.tcp.parallelism", Integer.toString(parallelism)));
            RdmaBuffer buffer = allocate(owner, size);
            for (int round = 0; round < 20; round++) {
                MemorySegment source = pattern(size, size * 31 + round);
                MemorySegment back = arena.allocate(size, 8);

                peer.newAction().writeFrom(buffer.remote(), source).submit(TRANSFER_TIMEOUT).join();
                peer.newAction().readInto(buffer.remote(), back).submit(TRANSFER_TIMEOUT).join();

                assertEquals(-1, Patterns.mismatch(source, buffer.segment(), size), "owner's memory differs, round " + round);
                assertEquals(-1, Patterns.mismatch(source, back, size), "read-back differs, round " + round);
            }
        }
    }

    @Nested
    class OnTheCallingThread {

        @ParameterizedTest(name = "{0} bytes, parallelism {1}")
        @org.junit.jupiter.params.provider.CsvSource({"8, 1", "3145733, 1", "3145733, 3"})
        void submitAndWait_writeThenRead_movesExactBytes(long size, int parallelism) {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager("rdma.tcp.parallelism", Integer.toString(parallelism)));
            RdmaBuffer buffer = allocate(owner, size);
            MemorySegment source = pattern(size, size + parallelism);
            MemorySegment back = arena.allocate(size, 8);

            peer.newAction().writeFrom(buffer.remote(), source).submitAndWait(TRANSFER_TIMEOUT);
            peer.newAction().readInto(buffer.remote(), back).submitAndWait(TRANSFER_TIMEOUT);

            assertEquals(-1, Patterns.mismatch(source, buffer.segment(), size), "owner's memory differs");
            assertEquals(-1, Patterns.mismatch(source, back, size), "read-back differs");
        }

        @Test
        void submitAndWait_releasedBuffer_throwsWithTheOwnersRefusal() {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager());
            RdmaBuffer buffer = owner.allocate(4096).join();
            buffer.close();

            io.rdma4j.RdmaSubmitException e = org.junit.jupiter.api.Assertions.assertThrows(
                    io.rdma4j.RdmaSubmitException.class,
                    () -> peer.newAction().readInto(buffer.remote(), arena.allocate(4096)).submitAndWait(TRANSFER_TIMEOUT));

            org.junit.jupiter.api.Assertions.assertInstanceOf(io.rdma4j.RemoteAccessException.class, e.getCause());
            org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("denied: no such buffer, released, or wrong access key"), e.getMessage());
        }
    }

    @Nested
    class BetweenTwoManagers {

        @ParameterizedTest(name = "{0} bytes")
        @ValueSource(longs = {1, TcpConnection.SMALL_READ_BYTES, TcpConnection.SMALL_READ_BYTES + 1, MIB + 1, 64 * MIB + 3})
        void write_thenReadBack_movesExactBytes(long size) {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager());
            RdmaBuffer buffer = allocate(owner, size);
            MemorySegment source = pattern(size, size);
            MemorySegment back = arena.allocate(size, 8);

            await(peer.write(buffer.remote(), source, TRANSFER_TIMEOUT));
            long ownerMismatch = Patterns.mismatch(source, buffer.segment(), size);
            await(peer.read(buffer.remote(), back, TRANSFER_TIMEOUT));

            assertEquals(-1, ownerMismatch, "owner's memory differs at this offset after the write");
            assertEquals(-1, Patterns.mismatch(source, back, size), "read-back differs at this offset");
        }

        @Test
        void read_intoLargerLocal_fillsOnlyThePrefix() {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager());
            RdmaBuffer buffer = allocate(owner, 3 * MIB + 5);
            Patterns.fill(buffer.segment(), 7);
            MemorySegment local = arena.allocate(4 * MIB, 8);
            local.fill((byte) 0x33);

            await(peer.read(buffer.remote(), local, TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(buffer.segment(), local, buffer.byteSize()));
            MemorySegment untouched = arena.allocate(local.byteSize() - buffer.byteSize());
            untouched.fill((byte) 0x33);
            assertEquals(-1, local.asSlice(buffer.byteSize()).mismatch(untouched), "bytes past the remote size must be untouched");
        }

        @Test
        void write_fromSmallerLocal_leavesTheRemoteTailUntouched() {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager());
            RdmaBuffer buffer = allocate(owner, 2 * MIB + 10);
            buffer.segment().fill((byte) 0x44);
            MemorySegment source = pattern(MIB + 3, 9);

            await(peer.write(buffer.remote(), source, TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(source, buffer.segment(), source.byteSize()));
            MemorySegment tail = buffer.segment().asSlice(source.byteSize());
            MemorySegment expectedTail = arena.allocate(tail.byteSize());
            expectedTail.fill((byte) 0x44);
            assertEquals(-1, tail.mismatch(expectedTail));
        }

        @Test
        void parallelConnections_writeThenReadBack_moveExactBytes() {
            RdmaManager owner = closing(TcpTesting.manager("rdma.tcp.parallelism", "4"));
            TcpTesting.Instrumented peer = closing(TcpTesting.instrumented("rdma.tcp.parallelism", "4"));
            long size = 7 * MIB + 5; // 8 chunks over 4 connections
            RdmaBuffer buffer = allocate(owner, size);
            MemorySegment source = pattern(size, 11);
            MemorySegment back = arena.allocate(size, 8);

            await(peer.manager().write(buffer.remote(), source, TRANSFER_TIMEOUT));
            await(peer.manager().read(buffer.remote(), back, TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(source, buffer.segment(), size));
            assertEquals(-1, Patterns.mismatch(source, back, size));
            assertTrue(peer.transport().pool().openedCount() <= 4, "never more connections than rdma.tcp.parallelism");
            assertEquals(0, peer.transport().pool().checkedOutCount());
        }

        @Test
        void action_withWriteThenReadOfOneBuffer_runsTheOpsInOrder() {
            RdmaManager owner = closing(TcpTesting.manager());
            RdmaManager peer = closing(TcpTesting.manager());
            RdmaBuffer buffer = allocate(owner, 2 * MIB + 1);
            MemorySegment source = pattern(buffer.byteSize(), 13);
            MemorySegment back = arena.allocate(buffer.byteSize(), 8);

            await(peer.newAction().writeFrom(buffer.remote(), source).readInto(buffer.remote(), back).submit(TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(source, back, buffer.byteSize()), "the read ran before the write finished");
        }

        @Test
        void concurrentTransfers_fromSeveralPeers_onDisjointBuffers_allMoveExactBytes() {
            int peers = 4;
            long size = 2 * MIB + 7;
            RdmaManager owner = closing(TcpTesting.manager());
            List<RdmaManager> clients = new ArrayList<>();
            List<RdmaBuffer> buffers = new ArrayList<>();
            List<MemorySegment> sources = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                clients.add(closing(TcpTesting.manager("rdma.tcp.parallelism", String.valueOf(1 + i % 2))));
                buffers.add(allocate(owner, size));
                sources.add(pattern(size, 100 + i));
            }

            List<CompletableFuture<Void>> writes = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                writes.add(clients.get(i).write(buffers.get(i).remote(), sources.get(i), TRANSFER_TIMEOUT));
            }
            writes.forEach(TcpTesting::await);
            List<MemorySegment> backs = new ArrayList<>();
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                MemorySegment back = arena.allocate(size, 8);
                backs.add(back);
                reads.add(clients.get(i).read(buffers.get(i).remote(), back, TRANSFER_TIMEOUT));
            }
            reads.forEach(TcpTesting::await);

            for (int i = 0; i < peers; i++) {
                assertEquals(-1, Patterns.mismatch(sources.get(i), buffers.get(i).segment(), size), "owner buffer " + i);
                assertEquals(-1, Patterns.mismatch(sources.get(i), backs.get(i), size), "read-back " + i);
            }
        }
    }

    @Nested
    class WithinOneManager {

        @Test
        void write_thenReadBack_betweenTwoBuffersOfOneManager_completesWithoutDeadlock() {
            RdmaManager manager = closing(TcpTesting.manager());
            RdmaBuffer target = allocate(manager, 3 * MIB + 1);
            RdmaBuffer source = allocate(manager, 3 * MIB + 1);
            Patterns.fill(source.segment(), 21);
            MemorySegment back = arena.allocate(target.byteSize(), 8);

            await(manager.write(target.remote(), source.segment(), TRANSFER_TIMEOUT));
            await(manager.read(target.remote(), back, TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(source.segment(), target.segment(), target.byteSize()));
            assertEquals(-1, Patterns.mismatch(source.segment(), back, target.byteSize()));
        }

        @Test
        void parallelWrite_intoOwnBuffer_completesWithoutDeadlock() {
            RdmaManager manager = closing(TcpTesting.manager("rdma.tcp.parallelism", "3"));
            RdmaBuffer target = allocate(manager, 5 * MIB);
            MemorySegment source = pattern(target.byteSize(), 23);

            await(manager.write(target.remote(), source, TRANSFER_TIMEOUT));

            assertEquals(-1, Patterns.mismatch(source, target.segment(), target.byteSize()));
        }
    }

    @Test
    void token_advertisesTheDataEndpointUnderTheManagersHost() {
        TcpTesting.Instrumented owner = closing(TcpTesting.instrumented());
        RdmaRemoteBuffer token = allocate(owner.manager(), 16).remote();

        assertEquals(List.of("tcp"), List.copyOf(token.transports()));
        assertEquals(owner.transport().dataEndpoint(), TestTokens.dataEndpoint(token));
        assertEquals(owner.manager().controlEndpoint().host(), TestTokens.dataEndpoint(token).host());
    }

    @Test
    void manager_findsTheTcpTransportThroughServiceLoader() {
        RdmaManager manager = closing(TcpTesting.manager());

        assertEquals(List.of("tcp"), manager.transports());
    }
}
