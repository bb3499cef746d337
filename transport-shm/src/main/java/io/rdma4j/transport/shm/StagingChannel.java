package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.SeqPacket;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.TransportOp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.SocketTimeoutException;
import java.util.List;

/**
 * A holder's staging channel to one owner: the way to the owner's memory that needs no ptrace
 * rights. The owner opened it on request over its hand-over socket (both ends checked with
 * {@code SO_PEERCRED}) and handed over a staging file of {@code slots} slots, mapped by both; the
 * connection then carries {@link StagingProtocol} requests. A read asks the owner to copy ranges
 * of a buffer into a slot and, once the owner answered, copies the slot into the caller's memory;
 * a write copies the caller's bytes into a slot and asks the owner to copy them into its buffer.
 * Two copies per byte, and the owner's CPU, where cross-memory attach or a mapping take one.
 *
 * <p>Ops go in pieces of at most one slot; up to {@code slots} pieces are in flight at once, so
 * the owner copies one piece while this thread copies another. Small ops on one buffer share a
 * piece (up to {@link StagingProtocol#MAX_RANGES}): one round trip for a batch.
 *
 * <p><b>Caller memory.</b> Only this thread's copies touch the caller's memory, each inside
 * {@link Cancellation#begin()}/{@link Cancellation#end()}, and none after the op failed, timed
 * out or was cancelled: once {@link #run} returns or throws, nothing more is read from or written
 * into the caller's segments (the owner may still finish a piece it was given, in the staging
 * file; a write's remote bytes are then unspecified, as over TCP).
 *
 * <p>Used by one thread at a time (the holder's pool hands it out, {@link ShmPeer#borrowStaging}).
 * A channel whose op ended with pieces still in flight, or whose connection failed, is
 * {@link #broken()} and is closed instead of reused.
 */
final class StagingChannel implements AutoCloseable {

    private final SeqPacket socket;
    private final Arena arena = Arena.ofShared();      // the staging mapping and the message scratch
    private final MemorySegment staging;
    private final int slots;
    private final long slotBytes;
    private final MemorySegment request;
    private final MemorySegment reply;
    /** Per slot in flight: the ranges of its piece, as (op index, offset in the op, length). */
    private final int[][] pieceOps;
    private final long[][] pieceAt;
    private final long[][] pieceLength;
    private final int[] pieceCount;
    private final boolean[] pieceRead;
    private boolean broken;

    private StagingChannel(int fd, int stagingFd, ShmProtocol.Staged shape) throws IOException {
        this.slots = shape.slots();
        this.slotBytes = shape.slotBytes();
        try {
            this.staging = MemoryFile.map(stagingFd, slots * slotBytes, arena);
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
        this.socket = new SeqPacket(fd);
        this.request = arena.allocate(StagingProtocol.MAX_REQUEST, 8);
        this.reply = arena.allocate(StagingProtocol.MAX_REPLY, 8);
        this.pieceOps = new int[slots][StagingProtocol.MAX_RANGES];
        this.pieceAt = new long[slots][StagingProtocol.MAX_RANGES];
        this.pieceLength = new long[slots][StagingProtocol.MAX_RANGES];
        this.pieceCount = new int[slots];
        this.pieceRead = new boolean[slots];
    }

    /**
     * Asks {@code peer} for a staging channel over its hand-over socket.
     *
     * @throws TransportException {@link Kind#PEER_UNREACHABLE} when the owner cannot be reached (or
     *                            someone else answers), {@link Kind#TIMEOUT} when it does not answer
     *                            in time, the owner's refusal otherwise
     */
    static StagingChannel open(ShmPeer peer, long timeoutNanos) {
        int fd;
        try {
            fd = Handover.connect(peer.socket(), peer.pid(), Math.max(timeoutNanos, 1_000_000));
        } catch (IOException e) {
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: cannot open a staging channel to " + peer
                    + ": " + e.getMessage(), e);
        }
        UnixSockets.Message answer = null;
        try {
            UnixSockets.send(fd, ShmProtocol.stage());
            answer = UnixSockets.receive(fd, ShmProtocol.MAX_REPLY, 1, false);
            byte[] bytes = answer.bytes();
            if (bytes.length == 0) {
                throw new TransportException(Kind.PEER_UNREACHABLE, "shm: " + peer
                        + " closed the connection instead of opening a staging channel");
            }
            int status = ShmProtocol.status(bytes);
            if (status != ShmProtocol.GRANTED) {
                throw ErrorCode.fromWire(status).toException(ShmProtocol.message(bytes));
            }
            ShmProtocol.Staged shape = ShmProtocol.readStaged(bytes);
            if (answer.fds().length != 1) {
                throw new IllegalArgumentException("staging grant with " + answer.fds().length + " descriptors");
            }
            StagingChannel channel = new StagingChannel(fd, answer.fds()[0], shape);
            fd = -1;        // the channel's now
            return channel;
        } catch (SocketTimeoutException e) {
            throw new TransportException(Kind.TIMEOUT, "shm: " + peer + " did not open a staging channel in time", e);
        } catch (IOException e) {
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: cannot open a staging channel to " + peer
                    + ": " + e.getMessage(), e);
        } catch (IllegalArgumentException e) {
            throw new TransportException(Kind.PROTOCOL, "shm: malformed staging grant from " + peer + ": "
                    + e.getMessage(), e);
        } finally {
            if (answer != null) {
                answer.closeFds();      // mapped (or not wanted): the mapping keeps the pages
            }
            if (fd >= 0) {
                Libc.close(fd);
            }
        }
    }

    /** Whether this channel may not be used again (pieces of an ended op in flight, or its connection failed). */
    boolean broken() {
        return broken;
    }

    /**
     * Runs {@code ops[from, to)}, all on {@code remote}'s buffer, through the owner's staging copy.
     *
     * @param cancel asked around every copy into or out of the caller's memory
     * @throws TransportException of the kind the same failure has over TCP: the owner's refusal
     *                            (key, release, range, closed memory), {@link Kind#TIMEOUT},
     *                            {@link Kind#PEER_UNREACHABLE} when the owner died or closed
     */
    void run(List<TransportOp> ops, int from, int to, ShmRemote.Staged remote, Deadline deadline, Cancellation cancel) {
        int inFlight = 0;
        int sent = 0;
        int done = 0;
        int op = from;          // the next piece starts in this op ...
        long at = 0;            // ... at this offset
        long id = remote.ref().bufferId();
        try {
            while (true) {
                while (inFlight < slots && op < to) {
                    if (deadline.isExpired()) {
                        throw timeout(ops, from, op, id);
                    }
                    int slot = sent % slots;
                    boolean read = ops.get(op).type() == TransportOp.OpType.READ_INTO_LOCAL;
                    StagingProtocol.putHeader(request, read ? StagingProtocol.READ : StagingProtocol.WRITE, slot,
                            remote.incarnation(), id, remote.accessKey());
                    int count = 0;
                    int length = 0;
                    long used = 0;
                    while (op < to && count < StagingProtocol.MAX_RANGES && used < slotBytes
                            && (ops.get(op).type() == TransportOp.OpType.READ_INTO_LOCAL) == read) {
                        TransportOp o = ops.get(op);
                        long n = Math.min(o.length() - at, slotBytes - used);
                        pieceOps[slot][count] = op;
                        pieceAt[slot][count] = at;
                        pieceLength[slot][count] = n;
                        length = StagingProtocol.putRange(request, count++, o.remoteOffset() + at, n);
                        used += n;
                        at += n;
                        if (at == o.length()) {
                            op++;
                            at = 0;
                        }
                    }
                    pieceCount[slot] = count;
                    pieceRead[slot] = read;
                    if (!read) {
                        copyLocal(ops, slot, false, cancel, id);
                    }
                    send(length, remote);
                    sent++;
                    inFlight++;
                }
                if (inFlight == 0) {
                    return;
                }
                int slot = done % slots;
                int n = receive(deadline, ops, from, op, id, remote);
                inFlight--;
                done++;
                if (n < StagingProtocol.REPLY_HEADER || StagingProtocol.replySlot(reply) != slot) {
                    broken = true;
                    throw new TransportException(Kind.PROTOCOL, "shm: malformed staging reply from " + remote.peer());
                }
                int status = StagingProtocol.replyStatus(reply);
                if (status != StagingProtocol.OK) {
                    throw ErrorCode.fromWire(status).toException(StagingProtocol.replyText(reply, n));
                }
                if (pieceRead[slot]) {
                    copyLocal(ops, slot, true, cancel, id);
                }
            }
        } finally {
            if (inFlight > 0) {
                broken = true;          // the owner may still answer (and copy into the slots): not reusable
            }
        }
    }

    /** Copies a piece's ranges between the caller's memory and its slot, inside the cancellation's bounds. */
    private void copyLocal(List<TransportOp> ops, int slot, boolean intoLocal, Cancellation cancel, long id) {
        if (!cancel.begin()) {
            throw new TransportException(Kind.INTERNAL, "shm: op on buffer " + id + " cancelled");
        }
        try {
            long position = slot * slotBytes;
            for (int i = 0, n = pieceCount[slot]; i < n; i++) {
                TransportOp op = ops.get(pieceOps[slot][i]);
                long length = pieceLength[slot][i];
                if (intoLocal) {
                    MemorySegment.copy(staging, position, op.local(), pieceAt[slot][i], length);
                } else {
                    MemorySegment.copy(op.local(), pieceAt[slot][i], staging, position, length);
                }
                position += length;
            }
        } catch (IllegalStateException | WrongThreadException e) {
            throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: " + e.getMessage(), e);
        } finally {
            cancel.end();
        }
    }

    private void send(int length, ShmRemote.Staged remote) {
        try {
            socket.send(request, length);
        } catch (IOException e) {
            broken = true;
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: the staging channel to " + remote.peer()
                    + " broke (the owner exited or closed its manager): " + e.getMessage(), e);
        }
    }

    private int receive(Deadline deadline, List<TransportOp> ops, int from, int op, long id, ShmRemote.Staged remote) {
        long remaining = deadline.remainingNanos();
        if (remaining <= 0) {
            throw timeout(ops, from, op, id);
        }
        int n;
        try {
            n = socket.receive(reply, remaining);
        } catch (SocketTimeoutException e) {
            throw timeout(ops, from, op, id);
        } catch (IOException e) {
            broken = true;
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: the staging channel to " + remote.peer()
                    + " broke (the owner exited or closed its manager): " + e.getMessage(), e);
        }
        if (n == 0) {
            broken = true;
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: " + remote.peer() + " closed the staging channel "
                    + "(the owner exited or closed its manager) before buffer " + id + " was copied");
        }
        return n;
    }

    private static TransportException timeout(List<TransportOp> ops, int from, int op, long id) {
        long bytes = 0;
        for (int i = from, end = Math.min(op + 1, ops.size()); i < end; i++) {
            bytes += ops.get(i).length();
        }
        return new TransportException(Kind.TIMEOUT, "shm: deadline passed before " + bytes
                + " bytes of buffer " + id + " were copied (staging)");
    }

    /** Closes the connection (the owner's thread sees its end and unmaps its side) and unmaps this side. Idempotent. */
    @Override
    public void close() {
        socket.close();
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
