package io.rdma4j.transport.shm;

import io.rdma4j.testing.Signals;
import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.SeqPacket;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The staging path (the owner copies between its registered memory and a staging file it shares
 * with the holder; the holder copies between that file and the caller's memory): what an owner
 * refuses to a hostile holder that writes its own requests, and what a holder's op does when the
 * owner dies, stops answering, or the op is cancelled.
 */
class ShmStagingTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long TIMEOUT_NANOS = TIMEOUT.toNanos();
    private static final int SIZE = 4096;

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager stagingHolder() {
        return managers.track(RdmaManager.newBuilder().isolated().providers(List.of(new ShmTransportProvider()))
                .set(ShmSettings.FORCE_STAGING.key(), "true").build());
    }

    /** A raw staging channel to the owner of {@code ref}, opened as a holder would, speaking {@link StagingProtocol} by hand. */
    private static final class RawChannel implements AutoCloseable {
        final SeqPacket socket;
        final Arena arena = Arena.ofShared();
        final MemorySegment staging;
        final MemorySegment request = arena.allocate(StagingProtocol.MAX_REQUEST + 64, 8);
        final MemorySegment reply = arena.allocate(StagingProtocol.MAX_REPLY, 8);
        final ShmProtocol.Staged shape;

        RawChannel(RemoteBufferRef ref) throws Exception {
            String name = Handover.name(HexFormat.of().formatHex(ShmContext.fromBytes(ref.context()).socket()));
            int fd = Handover.connect(name, ProcessHandle.current().pid(), TIMEOUT_NANOS);
            UnixSockets.send(fd, ShmProtocol.stage());
            UnixSockets.Message m = UnixSockets.receive(fd, ShmProtocol.MAX_REPLY, 1, false);
            shape = ShmProtocol.readStaged(m.bytes());
            staging = MemoryFile.map(m.fds()[0], shape.slots() * shape.slotBytes(), arena);
            m.closeFds();
            socket = new SeqPacket(fd);
        }

        /** Sends {@code length} bytes of {@link #request}; returns the reply's status. */
        int ask(int length) throws Exception {
            socket.send(request, length);
            int n = socket.receive(reply, TIMEOUT_NANOS);
            assertTrue(n >= StagingProtocol.REPLY_HEADER, "a reply of " + n + " bytes");
            return StagingProtocol.replyStatus(reply);
        }

        @Override
        public void close() {
            socket.close();
            arena.close();
        }
    }

    private static int header(RawChannel c, RemoteBufferRef ref, byte kind, int slot) {
        StagingProtocol.putHeader(c.request, kind, slot, HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(),
                ref.accessKey());
        return StagingProtocol.HEADER;
    }

    @Test
    void hostileRequests_outsideTheBufferOrTheSlot_areRefused_andNoByteAroundTheBufferChanges() throws Exception {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        MemorySegment whole = Patterns.fill(managers.arena().allocate(3 * SIZE, 4096), 1);
        RdmaRemoteBuffer token = owner.register(whole.asSlice(SIZE, SIZE)).join();
        RemoteBufferRef ref = TokenRefs.refFor(token, ShmTransportProvider.NAME);
        try (RawChannel c = new RawChannel(ref)) {
            c.staging.fill((byte) 0x77);
            long slot = c.shape.slotBytes();

            header(c, ref, StagingProtocol.WRITE, 0);
            assertEquals(ErrorCode.OUT_OF_RANGE.wire(), c.ask(StagingProtocol.putRange(c.request, 0, SIZE - 8, 16)),
                    "a range past the buffer's end");
            header(c, ref, StagingProtocol.WRITE, 0);
            assertEquals(ErrorCode.OUT_OF_RANGE.wire(), c.ask(StagingProtocol.putRange(c.request, 0, -8, 16)),
                    "a range before the buffer's start");
            header(c, ref, StagingProtocol.WRITE, 0);
            StagingProtocol.putRange(c.request, 0, 0, 8);
            assertEquals(ErrorCode.OUT_OF_RANGE.wire(), c.ask(StagingProtocol.putRange(c.request, 1, SIZE, 8)),
                    "a second range past the end");
            header(c, ref, StagingProtocol.WRITE, 0);
            assertEquals(ErrorCode.OUT_OF_RANGE.wire(), c.ask(StagingProtocol.putRange(c.request, 0, Long.MAX_VALUE - 4, 8)),
                    "an offset whose end overflows");
            header(c, ref, StagingProtocol.WRITE, 0);
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.putRange(c.request, 0, 8, Long.MAX_VALUE - 4)),
                    "a length longer than a slot");
            header(c, ref, StagingProtocol.READ, c.shape.slots());
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.putRange(c.request, 0, 0, 8)),
                    "a slot past the staging file");
            header(c, ref, StagingProtocol.READ, -1);
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.putRange(c.request, 0, 0, 8)),
                    "a negative slot");
            header(c, ref, StagingProtocol.READ, c.shape.slots() - 1);
            StagingProtocol.putRange(c.request, 0, 0, slot);
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.putRange(c.request, 1, 0, 8)),
                    "ranges longer than a slot together");
            header(c, ref, StagingProtocol.READ, 0);
            StagingProtocol.putRange(c.request, 0, 0, 8);
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.HEADER + 2 * StagingProtocol.RANGE),
                    "a count that disagrees with the length");
            header(c, ref, (byte) 9, 0);
            assertEquals(ErrorCode.BAD_REQUEST.wire(), c.ask(StagingProtocol.putRange(c.request, 0, 0, 8)), "an unknown kind");
            StagingProtocol.putHeader(c.request, StagingProtocol.WRITE, 0, HexFormat.of().parseHex(ref.incarnation()),
                    ref.bufferId(), new byte[16]);
            assertEquals(ErrorCode.ACCESS_DENIED.wire(), c.ask(StagingProtocol.putRange(c.request, 0, 0, 8)), "another key");

            assertEquals(-1, Patterns.mismatch(whole, 1), "the owner's memory, the buffer and both neighbours");
            header(c, ref, StagingProtocol.WRITE, 1);
            assertEquals(StagingProtocol.OK, c.ask(StagingProtocol.putRange(c.request, 0, SIZE - 8, 8)),
                    "a request inside the buffer is served on the same channel");
            MemorySegment expected = Patterns.fill(Arena.ofAuto().allocate(3 * SIZE), 1);
            expected.asSlice(2 * SIZE - 8, 8).fill((byte) 0x77);
            assertEquals(-1, whole.mismatch(expected), "exactly the last 8 bytes of the buffer were written");
        }
    }

    @Test
    void batchOfManySmallOps_onePieceHoldsAtMost256_movesExactlyTheBytes() {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = stagingHolder();
        int ops = 600;
        MemorySegment remote = Patterns.fill(managers.arena().allocate(ops * 8L, 8), 4);
        RdmaRemoteBuffer token = owner.register(remote).join();
        MemorySegment local = managers.arena().allocate(ops * 8L, 8);
        var action = holder.newAction();
        for (int i = ops - 1; i >= 0; i--) {     // reverse order: each op lands where its offset says
            action.readInto(token.slice(i * 8L, 8), local.asSlice(i * 8L, 8));
        }

        RdmaResult r = action.submitForResult(TIMEOUT).join();

        assertEquals(List.of("shm"), r.transports());
        assertEquals(-1, local.mismatch(remote));
    }

    @Test
    void ownerKilled_theNextOpFailsAsPeerUnreachable() throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + SIZE, "memory=register")) {
            RdmaManager holder = stagingHolder();
            MemorySegment local = managers.arena().allocate(SIZE);
            holder.read(owner.token(), local, TIMEOUT).join();          // a channel is open and idle
            owner.process().destroyForcibly();
            assertTrue(owner.process().waitFor(60, TimeUnit.SECONDS));

            var e = assertThrows(CompletionException.class, () -> holder.read(owner.token(), local, TIMEOUT).join());

            assertTrue(causeOf(e, PeerUnreachableException.class), String.valueOf(e.getCause()));
        }
    }

    @Test
    void ownerStopped_theReadTimesOut_andAfterTheOwnerResumes_theCallersMemoryIsNeverWritten() throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + SIZE, "memory=register")) {
            assertEquals("OK", owner.command("fill 6"));
            RdmaManager holder = stagingHolder();
            holder.read(owner.token(), managers.arena().allocate(SIZE), TIMEOUT).join();     // a channel is open
            MemorySegment local = Patterns.fill(managers.arena().allocate(SIZE), 2);
            Signals.stop(owner.process().pid());
            try {
                var e = assertThrows(CompletionException.class,
                        () -> holder.read(owner.token(), local, Duration.ofMillis(300)).join());
                assertTrue(causeOf(e, RdmaTimeoutException.class), String.valueOf(e.getCause()));
            } finally {
                Signals.resume(owner.process().pid());
            }
            MemorySegment later = managers.arena().allocate(SIZE);
            holder.read(owner.token(), later, TIMEOUT).join();        // the owner answers again (the stale request first)
            assertEquals(-1, Patterns.mismatch(later, 6));

            assertEquals(-1, Patterns.mismatch(local, 2), "the timed-out read's memory kept the caller's bytes");
        }
    }

    @Test
    void ownerStopped_aCancelledRead_returnsAtOnce_andTheCallersMemoryIsNeverWritten() throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + SIZE, "memory=register")) {
            assertEquals("OK", owner.command("fill 6"));
            RdmaManager holder = stagingHolder();
            holder.read(owner.token(), managers.arena().allocate(SIZE), TIMEOUT).join();
            MemorySegment local = Patterns.fill(managers.arena().allocate(SIZE), 2);
            CompletableFuture<Void> read;
            Signals.stop(owner.process().pid());
            try {
                read = holder.read(owner.token(), local, TIMEOUT);
                assertTrue(read.cancel(true));
                assertTrue(read.isCancelled());
            } finally {
                Signals.resume(owner.process().pid());
            }
            MemorySegment later = managers.arena().allocate(SIZE);
            holder.read(owner.token(), later, TIMEOUT).join();
            assertEquals(-1, Patterns.mismatch(later, 6));

            assertEquals(-1, Patterns.mismatch(local, 2), "the cancelled read's memory kept the caller's bytes");
        }
    }

    private static boolean causeOf(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
