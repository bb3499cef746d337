package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.ProcessVmCopier;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.TransportOp;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The holder's side of the shm transport: decides per owner ({@link ShmPeers}) whether this
 * process can attach to it and which path each kind of the owner's memory takes (once, logged at
 * INFO: its memory files by mapping; its other registered memory by cross-memory attach where the
 * owner and the kernel allow it, else by the owner's staging copy, {@link StagingChannel}), asks the owner for each
 * buffer's grant (once, over the owner's hand-over socket, which hands the memory files over:
 * {@link Handover}), and runs ops as copies on the calling thread.
 *
 * <p>An op on a remote buffer: announce the copy in the owner's {@link AccessTable} (refused when
 * the buffer was released), copy in pieces of at most {@code chunk} bytes with
 * {@code process_vm_readv}/{@code writev}, checking deadline, cancellation and release between
 * pieces, then end the announcement. An op on this manager's own buffer: a
 * {@link MemorySegment#copy} under a pin of the registration.
 *
 * <p>An op spanning at least two chunks is split in up to {@code copyThreads} parts, the caller's
 * thread copying one and helper threads the others ({@link ShmCopy}).
 *
 * <p>Thread-safe. Copiers (preallocated iovecs) are pooled, one per thread copying.
 */
final class ShmHolder implements AutoCloseable {

    private final HostIdentity self;
    private final RegistrationLookup registrations;
    private final long chunk;
    private final int copyThreads;
    private final ExecutorService helpers;      // null when copyThreads is 1
    private final ShmPeers peers;      // the owners: attached or refused, once each
    private final ConcurrentLinkedQueue<ProcessVmCopier> copiers = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    ShmHolder(HostIdentity self, byte[] ownIncarnation, RegistrationLookup registrations, long chunk, int copyThreads) {
        this(self, ownIncarnation, registrations, chunk, copyThreads, false);
    }

    /**
     * @param forceStaging reach every buffer of another process through its owner's staging copy
     *                     ({@link ShmSettings#FORCE_STAGING})
     */
    ShmHolder(HostIdentity self, byte[] ownIncarnation, RegistrationLookup registrations, long chunk, int copyThreads,
              boolean forceStaging) {
        this.self = self;
        this.peers = new ShmPeers(self, HexFormat.of().formatHex(ownIncarnation), forceStaging, this::probe);
        this.registrations = registrations;
        this.chunk = chunk;
        this.copyThreads = copyThreads;
        this.helpers = copyThreads <= 1 ? null : Executors.newFixedThreadPool(copyThreads - 1,
                Thread.ofPlatform().daemon().name("rdma-shm-copy-", 0).factory());
    }

    /**
     * Decodes a token's context; the first token of each owner decides whether this process can
     * attach to it: same identity, the owner's hand-over socket answers from the owner's pid, and,
     * when the owner permits cross-memory attach, a probe copy works.
     *
     * @throws TransportException {@link Kind#PEER_UNREACHABLE} saying why this owner cannot be
     *                            reached here (then another transport should carry its buffers);
     *                            {@link Kind#PROTOCOL} for a malformed context
     */
    ShmRemote decode(RemoteBufferRef ref) {
        return peers.decode(ref);
    }

    /** Reads the first 8 bytes of the owner's table with process_vm_readv: the ptrace check, for real. */
    private int probe(ShmContext context) {
        ProcessVmCopier copier = borrow();
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            return copier.read(context.pid(), arena.allocate(8), 0, context.tableAddress(), 8);
        } finally {
            giveBack(copier);
        }
    }

    /**
     * Whether {@code ops} can run on the caller's thread without blocking: at most
     * {@code maxBytes} in all, each on this manager's own buffer or on one whose grant is known
     * (no hand-over request needed).
     */
    boolean canRunInline(List<TransportOp> ops, long maxBytes) {
        long bytes = 0;
        Object checked = null;          // the last remote found granted: a run of ops on one token asks once
        for (int i = 0, n = ops.size(); i < n; i++) {
            TransportOp op = ops.get(i);
            bytes += op.length();
            Object context = op.remoteContext();
            if (bytes > maxBytes || !(context instanceof ShmRemote remote) || remote instanceof ShmRemote.Staged) {
                return false;       // a staged op waits for the owner's answer
            }
            if (context != checked && remote instanceof ShmRemote.Attached a
                    && a.peer().attachment(a.ref().bufferId()) == null) {
                return false;
            }
            checked = context;
        }
        return true;
    }

    /** Ops of at most this many bytes are copied together with their neighbours on the same buffer. */
    static final long BATCH_OP_MAX_BYTES = 64 * 1024;

    /**
     * Runs {@code ops} on the calling thread, in order, stopping at the first failure. Runs of
     * consecutive small ops (at most {@link #BATCH_OP_MAX_BYTES} each) on one buffer of another
     * process (one token or slices of it) are copied together ({@link ShmBatchCopy}): one grant
     * and key check, one access-table entry, one pidfd check per piece, and on unmapped memory one
     * vectored system call per piece.
     *
     * @param cancel asked between pieces; the ops stop with nothing more moved once it says yes
     * @throws TransportException on the first failure, of the kind the same failure has on TCP
     */
    void runAll(List<TransportOp> ops, Deadline deadline, Cancellation cancel) {
        for (int i = 0, n = ops.size(), end; i < n; i = end) {
            TransportOp op = ops.get(i);
            end = i + 1;
            if (op.remoteContext() instanceof ShmRemote.Staged staged) {
                while (end < n && sameBuffer(staged, ops.get(end).remoteContext())) {
                    end++;
                }
                if (deadline.isExpired()) {
                    throw timeout(op);
                }
                copyStaged(ops, i, end, staged, deadline, cancel);
            } else if (op.remoteContext() instanceof ShmRemote.Attached attached && op.length() <= BATCH_OP_MAX_BYTES) {
                while (end < n && ops.get(end).length() <= BATCH_OP_MAX_BYTES
                        && sameBuffer(attached, ops.get(end).remoteContext())) {
                    end++;
                }
                if (deadline.isExpired()) {
                    throw timeout(op);
                }
                copyAcross(ops, i, end, attached, deadline, cancel);
            } else {
                run(op, deadline, cancel);
            }
        }
    }

    /**
     * Whether {@code context} names the buffer {@code a} names, with the same key: the same token,
     * or another slice of it.
     */
    private static boolean sameBuffer(ShmRemote.Attached a, Object context) {
        return context == a || context instanceof ShmRemote.Attached b && b.peer() == a.peer()
                && b.ref().bufferId() == a.ref().bufferId() && java.util.Arrays.equals(b.accessKey(), a.accessKey());
    }

    /** Whether {@code context} names the buffer {@code a} names, with the same key (the same token, or a slice of it). */
    private static boolean sameBuffer(ShmRemote.Staged a, Object context) {
        return context == a || context instanceof ShmRemote.Staged b && b.peer() == a.peer()
                && b.ref().bufferId() == a.ref().bufferId() && java.util.Arrays.equals(b.accessKey(), a.accessKey())
                && java.util.Arrays.equals(b.incarnation(), a.incarnation());
    }

    /**
     * Copies {@code ops[from, to)}, all on {@code remote}'s buffer, through the owner's staging
     * copy, on a staging channel borrowed for the run; the owner checks the key and the ranges
     * of every piece.
     */
    private void copyStaged(List<TransportOp> ops, int from, int to, ShmRemote.Staged remote, Deadline deadline,
                            Cancellation cancel) {
        StagingChannel channel = remote.peer().borrowStaging(deadline);
        try {
            channel.run(ops, from, to, remote, deadline, cancel);
        } finally {
            remote.peer().giveBackStaging(channel);
        }
    }

    /**
     * Runs one op on the calling thread.
     *
     * @param cancel asked between pieces; the op stops with nothing more moved once it says yes
     * @throws TransportException on any failure, of the kind the same failure has on TCP
     */
    void run(TransportOp op, Deadline deadline, Cancellation cancel) {
        ShmRemote remote = op.remoteContext(ShmRemote.class);
        if (deadline.isExpired()) {
            throw timeout(op);
        }
        switch (remote) {
            case ShmRemote.Local local -> copyLocally(op, local.ref());
            case ShmRemote.Attached attached -> copyAcross(List.of(op), 0, 1, attached, deadline, cancel);
            case ShmRemote.Staged staged -> copyStaged(List.of(op), 0, 1, staged, deadline, cancel);
        }
    }

    @SuppressWarnings("try")    // the pin is held, not used: it keeps the memory alive during the copy
    private void copyLocally(TransportOp op, RemoteBufferRef ref) {
        try {
            LocalBuffer buffer = registrations.lookup(HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(),
                    ref.accessKey(), op.remoteOffset(), op.length());
            if (op.type() == TransportOp.OpType.WRITE_FROM_LOCAL && buffer.readOnly()) {
                throw BufferAccessException.readOnly(ref.bufferId());
            }
            try (LocalBuffer.Pin pin = buffer.pin()) {
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL) {
                    MemorySegment.copy(buffer.segment(), op.remoteOffset(), op.local(), 0, op.length());
                } else {
                    MemorySegment.copy(op.local(), 0, buffer.segment(), op.remoteOffset(), op.length());
                }
            }
        } catch (BufferAccessException e) {
            throw ErrorCode.of(e.reason()).toException(e.getMessage());
        }
    }

    /**
     * Copies {@code ops[from, to)}, all on {@code remote}: the grant and its key checked once, the
     * ranges checked before anything moves, one access-table row held for the whole run.
     */
    private void copyAcross(List<TransportOp> ops, int from, int to, ShmRemote.Attached remote, Deadline deadline,
                            Cancellation cancel) {
        ShmPeer peer = remote.peer();
        long id = remote.ref().bufferId();
        ShmPeer.Attachment attachment = peer.attachment(id);
        if (attachment == null) {
            attachment = peer.remember(id, remote.accessKey(), ask(remote, deadline));
        }
        if (!attachment.grantedTo(remote.accessKey())) {
            // the owner granted this buffer to another key: this token's is wrong, refused as the owner would
            throw ErrorCode.ACCESS_DENIED.toException(ShmProtocol.denied(id));
        }
        ShmProtocol.Grant grant = attachment.grant();
        for (int i = from; i < to; i++) {
            TransportOp op = ops.get(i);
            if (op.type() == TransportOp.OpType.WRITE_FROM_LOCAL && grant.slot().readOnly()) {
                // the owner published the buffer read-only: refused whatever the token claims, before anything moves
                throw ErrorCode.READ_ONLY.toException(BufferAccessException.readOnly(id).getMessage());
            }
            if (op.remoteOffset() > grant.size() || op.length() > grant.size() - op.remoteOffset()) {
                throw ErrorCode.OUT_OF_RANGE.toException("range of " + op.length() + " bytes at offset "
                        + op.remoteOffset() + " lies outside buffer " + id + " (" + grant.size() + " bytes)");
            }
        }
        int row = peer.table().enter(grant.slot());
        while (row == AccessTable.DORMANT) {      // a watched buffer, its owner dormant: asked, it looks at its arenas first
            try {
                ask(remote, deadline).closeFds();
            } catch (TransportException e) {
                peer.forget(id);
                throw e;
            }
            row = peer.table().enter(grant.slot());
        }
        if (row == AccessTable.RELEASED) {
            peer.forget(id);
            throw ownersWord(remote, deadline, ErrorCode.ACCESS_DENIED.toException(ShmProtocol.denied(id)));
        }
        if (row == AccessTable.BUSY) {
            throw new TransportException(Kind.INTERNAL, "shm: " + AccessTable.ROWS
                    + " copies of this process already in flight to " + peer);
        }
        ShmCopy.Withdrawn withdrawn;
        try {
            MemorySegment mapped = attachment.mapping();
            if (mapped == null && !peer.crossMemory()) {     // unmapped since: found released by another thread
                throw new ShmCopy.Withdrawn(ShmProtocol.denied(id));
            }
            if (to - from == 1) {
                TransportOp op = ops.get(from);
                copyInParts(op, new ShmCopy(op, mapped, grant, peer, deadline, cancel, chunk));
            } else {
                ProcessVmCopier copier = borrow();
                try {
                    ShmBatchCopy.run(ops, from, to, grant, mapped, peer, deadline, cancel, chunk, copier);
                } finally {
                    giveBack(copier);
                }
            }
            return;
        } catch (ShmCopy.Withdrawn e) {
            withdrawn = e;
        } finally {
            peer.table().exit(row);
        }
        peer.forget(id);
        throw ownersWord(remote, deadline, withdrawn);
    }

    /**
     * Why the owner no longer serves a buffer this holder found withdrawn (released, or its memory
     * closed without release): the owner's refusal, asked once, so that the op fails as it would
     * over TCP ("denied", or "the owner closed the arena of its memory without releasing it
     * first"); {@code fallback} when the deadline passed, the owner cannot be asked, or it
     * unexpectedly grants the buffer again.
     */
    private TransportException ownersWord(ShmRemote.Attached remote, Deadline deadline, TransportException fallback) {
        if (deadline.isExpired()) {
            return fallback;
        }
        try {
            ask(remote, deadline).closeFds();
            return fallback;
        } catch (TransportException e) {
            return e.kind() == fallback.kind() || e.kind() == Kind.STALE_TOKEN ? e : fallback;
        }
    }

    /**
     * Copies the op's range on this thread, or, when it spans at least two chunks and helpers
     * exist, in up to {@code copyThreads} parts of whole pages, one on this thread and the others
     * on helper threads. Returns only when every part has ended, whatever happened, so nothing
     * touches the local memory afterwards; throws the first part's failure.
     */
    private void copyInParts(TransportOp op, ShmCopy copy) {
        long length = op.length();
        int parts = helpers == null || length < 2 * chunk ? 1 : (int) Math.min(copyThreads, length / chunk);
        ProcessVmCopier copier = borrow();
        try {
            if (parts == 1) {
                copy.range(0, length, copier);
            } else {
                long per = ((length + parts - 1) / parts + 4095) & ~4095L;
                List<Future<?>> others = new ArrayList<>(parts - 1);
                for (long from = per; from < length; from += per) {
                    long start = from;
                    others.add(helpers.submit(() -> {
                        ProcessVmCopier c = borrow();
                        try {
                            copy.range(start, Math.min(length, start + per), c);
                        } finally {
                            giveBack(c);
                        }
                    }));
                }
                RuntimeException failure = null;
                try {
                    copy.range(0, per, copier);
                } catch (RuntimeException e) {
                    failure = e;
                }
                for (Future<?> f : others) {
                    RuntimeException e = awaitPart(f);
                    failure = failure == null ? e : failure;
                }
                if (failure != null) {
                    throw failure;
                }
            }
        } finally {
            giveBack(copier);
        }
    }

    /** Waits for a helper's part, uninterruptibly: its pieces are bounded by the deadline. */
    private static RuntimeException awaitPart(Future<?> f) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    f.get();
                    return null;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    return e.getCause() instanceof RuntimeException r ? r
                            : new TransportException(Kind.INTERNAL, "shm copy thread failed: " + e.getCause(), e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Asks the owner, over its hand-over socket, for the grant of the remote's buffer; the owner
     * checks the key first. The descriptors handed over with a grant are the caller's.
     */
    private ShmPeer.Granted ask(ShmRemote.Attached remote, Deadline deadline) {
        RemoteBufferRef ref = remote.ref();
        ShmPeer peer = remote.peer();
        byte[] request = ShmProtocol.attach(HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(),
                ref.accessKey(), self);
        UnixSockets.Message reply;
        try {
            reply = Handover.ask(peer.socket(), peer.pid(), request, deadline.remainingNanos());
        } catch (java.net.SocketTimeoutException e) {
            throw new TransportException(Kind.TIMEOUT, "shm: " + ref.owner() + " did not answer the attach request by the deadline", e);
        } catch (IOException e) {
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: cannot ask " + peer + " for buffer "
                    + ref.bufferId() + ": " + e.getMessage(), e);
        }
        byte[] bytes = reply.bytes();
        int status;
        try {
            status = ShmProtocol.status(bytes);
            if (status == ShmProtocol.GRANTED) {
                ShmProtocol.Grant grant = ShmProtocol.readGrant(bytes);
                if (grant.pid() != peer.pid()) {
                    throw new IllegalArgumentException("grant names pid " + grant.pid() + ", token " + peer.pid());
                }
                return new ShmPeer.Granted(grant, reply.fds());
            }
        } catch (IllegalArgumentException e) {
            reply.closeFds();
            throw new TransportException(Kind.PROTOCOL, "malformed shm reply from " + ref.owner() + ": " + e.getMessage(), e);
        }
        reply.closeFds();
        if (status == (ShmProtocol.NOT_PERMITTED & 0xff)) {
            throw new TransportException(Kind.REMOTE_FAILURE, ShmProtocol.message(bytes));
        }
        throw ErrorCode.fromWire(status).toException(ShmProtocol.message(bytes));
    }

    private static TransportException timeout(TransportOp op) {
        return new TransportException(Kind.TIMEOUT, "shm: deadline passed before " + op.length()
                + " bytes of buffer " + op.remote().bufferId() + " were copied");
    }

    private ProcessVmCopier borrow() {
        ProcessVmCopier c = copiers.poll();
        return c != null ? c : new ProcessVmCopier();
    }

    private void giveBack(ProcessVmCopier c) {
        copiers.offer(c);
        if (closed && copiers.remove(c)) {
            c.close();
        }
    }

    /** Unmaps every owner's table and frees the pooled copiers. Idempotent; ops must have ended. */
    @Override
    public void close() {
        closed = true;
        if (helpers != null) {
            helpers.close();
        }
        peers.close();
        for (ProcessVmCopier c; (c = copiers.poll()) != null; ) {
            c.close();
        }
    }
}
