package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.SeqPacket;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.RegistrationLookup;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * The owner's end of one staging channel: a thread that serves one holder connection's
 * {@link StagingProtocol} requests in order, copying between this manager's registered memory and
 * the staging file it shares with that holder. The owner's copy is the one that touches its
 * registered memory, under the same checks a TCP request gets: the manager's lookup (incarnation,
 * id, key in constant time, range), then a pin of the buffer (refused once it was released or the
 * caller closed its arena), then a copy that fails rather than touch memory whose arena closed.
 * A request's ranges are checked against the buffer and against the slot before any byte moves,
 * so a hostile holder can make this thread copy only inside a buffer it has the key of and inside
 * its own staging file.
 *
 * <p>The thread blocks in {@code recv} while the holder sends nothing (no timer, no CPU); it
 * ends when the holder closes the connection or dies, or {@link #close()} shuts it down, and
 * then unmaps the staging file. Replies are sent with the hand-over socket's send timeout: a
 * holder that stops reading them loses its channel.
 */
final class StagingServer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(StagingServer.class.getName());

    private final SeqPacket socket;
    private final Arena arena;              // the staging file's mapping (and its parked descriptor)
    private final MemorySegment staging;
    private final int slots;
    private final long slotBytes;
    private final RegistrationLookup registrations;
    private final long holderPid;
    private final Runnable onEnd;
    private final byte[] incarnation = new byte[RegistrationLookup.INCARNATION_BYTES];
    private final byte[] key = new byte[16];
    private Thread thread;

    /**
     * @param connection the holder's connection, now owned by this server
     * @param arena      the staging file's lifetime, now owned by this server (closed when it ends)
     * @param onEnd      told once when the thread ends (after everything was freed)
     */
    StagingServer(int connection, Arena arena, MemorySegment staging, int slots, long slotBytes,
                  RegistrationLookup registrations, long holderPid, Runnable onEnd) {
        this.socket = new SeqPacket(connection);
        this.arena = arena;
        this.staging = staging;
        this.slots = slots;
        this.slotBytes = slotBytes;
        this.registrations = registrations;
        this.holderPid = holderPid;
        this.onEnd = onEnd;
    }

    /** Starts serving on a platform thread of its own (it blocks in native {@code recv}). */
    synchronized void start() {
        thread = Thread.ofPlatform().daemon().name("rdma-shm-staging-" + holderPid).start(this::run);
    }

    private void run() {
        try (Arena scratch = Arena.ofConfined()) {
            MemorySegment request = scratch.allocate(StagingProtocol.MAX_REQUEST, 8);
            MemorySegment reply = scratch.allocate(StagingProtocol.MAX_REPLY, 8);
            while (true) {
                int n;
                try {
                    n = socket.receive(request, 0);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "shm: staging channel of holder pid " + holderPid + " failed", e);
                    break;
                }
                if (n == 0) {
                    break;          // the holder closed it (or died), or close() shut it down
                }
                int length = serve(request, n, reply);
                try {
                    socket.send(reply, length);
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "shm: cannot answer holder pid " + holderPid
                            + " on its staging channel; closing it", e);
                    break;
                }
            }
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.WARNING, "shm: the staging channel of holder pid " + holderPid + " failed", e);
        } finally {
            socket.close();
            arena.close();
            onEnd.run();
        }
    }

    /** Serves one request of {@code n} bytes; writes the reply and returns its length. */
    @SuppressWarnings("try")    // the pin is held, not used: it keeps the memory alive during the copy
    private int serve(MemorySegment request, int n, MemorySegment reply) {
        if (n < StagingProtocol.HEADER) {
            return refuse(reply, ErrorCode.BAD_REQUEST, -1, "staging request of " + n + " bytes");
        }
        byte kind = request.get(JAVA_BYTE, StagingProtocol.KIND_AT);
        int count = StagingProtocol.count(request);
        int slot = request.get(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, StagingProtocol.SLOT_AT);
        if ((kind != StagingProtocol.READ && kind != StagingProtocol.WRITE) || count < 1
                || count > StagingProtocol.MAX_RANGES || n != StagingProtocol.HEADER + count * StagingProtocol.RANGE
                || slot < 0 || slot >= slots) {
            return refuse(reply, ErrorCode.BAD_REQUEST, slot, "malformed staging request (kind " + kind + ", "
                    + count + " ranges, slot " + slot + ", " + n + " bytes)");
        }
        long total = 0;
        for (int i = 0; i < count; i++) {
            long length = StagingProtocol.rangeLength(request, i);
            if (length < 1 || length > slotBytes - total) {
                return refuse(reply, ErrorCode.BAD_REQUEST, slot, "staging request's ranges do not fit a slot of "
                        + slotBytes + " bytes");
            }
            total += length;
        }
        MemorySegment.copy(request, JAVA_BYTE, StagingProtocol.INCARNATION_AT, incarnation, 0, incarnation.length);
        MemorySegment.copy(request, JAVA_BYTE, StagingProtocol.KEY_AT, key, 0, key.length);
        long bufferId = request.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, StagingProtocol.ID_AT);
        LocalBuffer buffer;
        try {
            buffer = registrations.lookup(incarnation, bufferId, key, StagingProtocol.rangeOffset(request, 0),
                    StagingProtocol.rangeLength(request, 0));
        } catch (BufferAccessException e) {
            return refuse(reply, ErrorCode.of(e.reason()), slot, e.getMessage());
        }
        if (kind == StagingProtocol.WRITE && buffer.readOnly()) {
            return refuse(reply, ErrorCode.READ_ONLY, slot, BufferAccessException.readOnly(bufferId).getMessage());
        }
        long size = buffer.byteSize();
        for (int i = 1; i < count; i++) {
            long offset = StagingProtocol.rangeOffset(request, i);
            long length = StagingProtocol.rangeLength(request, i);
            if (offset < 0 || offset > size || length > size - offset) {
                return refuse(reply, ErrorCode.OUT_OF_RANGE, slot, "range of " + length + " bytes at offset " + offset
                        + " lies outside buffer " + bufferId + " (" + size + " bytes)");
            }
        }
        long at = slot * slotBytes;
        try (LocalBuffer.Pin pin = buffer.pin()) {
            MemorySegment memory = buffer.segment();
            for (int i = 0; i < count; i++) {
                long offset = StagingProtocol.rangeOffset(request, i);
                long length = StagingProtocol.rangeLength(request, i);
                if (kind == StagingProtocol.READ) {
                    MemorySegment.copy(memory, offset, staging, at, length);
                } else {
                    MemorySegment.copy(staging, at, memory, offset, length);
                }
                at += length;
            }
        } catch (BufferAccessException e) {
            return refuse(reply, ErrorCode.of(e.reason()), slot, e.getMessage());
        } catch (IllegalStateException | WrongThreadException e) {
            return refuse(reply, ErrorCode.OWNER_MEMORY_CLOSED, slot, e instanceof WrongThreadException
                    ? "buffer " + bufferId + ": its memory is confined to one thread of the owner; register segments "
                    + "of shared or global arenas"
                    : "buffer " + bufferId + ": its memory was closed by its owner (" + e.getMessage() + ")");
        }
        return StagingProtocol.putReply(reply, StagingProtocol.OK, slot, null);
    }

    private static int refuse(MemorySegment reply, ErrorCode code, int slot, String text) {
        return StagingProtocol.putReply(reply, code.wire(), slot, text);
    }

    /** Frees a server that was never started: closes the connection and unmaps the staging file. */
    void discard() {
        socket.close();
        arena.close();
    }

    /** Ends the channel: wakes the thread (the holder sees the end of the stream) and waits for it. Idempotent. */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            t = thread;
        }
        socket.shutdown();
        if (t == null) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                t.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
