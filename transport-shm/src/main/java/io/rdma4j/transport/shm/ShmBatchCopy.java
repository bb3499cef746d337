package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.ProcessVmCopier;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.TransportOp;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A run of small ops on one buffer of one owner, copied together: the caller has checked the
 * grant and the ranges once and holds one row of the owner's access table for the whole run.
 * The ops go in pieces of at most {@code chunk} bytes and {@link ProcessVmCopier#MAX_IOV} ops:
 * on a mapped buffer one {@link MemorySegment#copy} per op, otherwise one vectored
 * {@code process_vm_readv}/{@code writev} per piece, or, for reads whose ranges lie close
 * together (within {@link ProcessVmCopier#SCRATCH_BYTES}), one read of their whole span copied
 * out op by op, and for writes whose ranges cover their span without a gap (neighbours, or the
 * same bytes again), one write of the span composed in scratch memory.
 *
 * <p>What {@link ShmCopy} does per piece of one op is done here per piece of many: before each
 * piece but the first, the deadline and the release; around each, the cancellation; after each
 * (and before the first system call), the owner's pidfd, so that no write starts into a process
 * that took a dead owner's pid and an op overlapping the owner's death fails. A run therefore
 * costs one table entry, one key check and one pidfd poll, where one op each cost as much. On a
 * mapped buffer the owner's liveness word ({@link AccessTable#ownerAlive()}, a load) stands in
 * for the poll while it says the owner lives: a copy into a mapping reaches no other process.
 *
 * <p>On failure the ops before the failing piece moved; those of the failing piece may have
 * moved in part; the failure names the buffer and, for a deadline, how many ops had moved.
 */
final class ShmBatchCopy {

    private ShmBatchCopy() {
    }

    /**
     * Copies {@code ops[from, to)}, all on {@code peer}'s buffer described by {@code grant}.
     *
     * @param mapped the buffer mapped here, or null for system calls
     * @param copier this thread's native scratch
     * @throws TransportException of the kind TCP gives the same failure; {@link ShmCopy.Withdrawn}
     *                            when the buffer was released or its memory went away
     */
    static void run(List<TransportOp> ops, int from, int to, ShmProtocol.Grant grant, MemorySegment mapped,
                    ShmPeer peer, Deadline deadline, Cancellation cancel, long chunk, ProcessVmCopier copier) {
        long bufferId = ops.get(from).remote().bufferId();
        boolean checkedAlive = false;
        for (int start = from, end; start < to; start = end) {
            long bytes = 0;
            end = start;
            while (end < to && end - start < ProcessVmCopier.MAX_IOV && (end == start || bytes + ops.get(end).length() <= chunk)) {
                bytes += ops.get(end++).length();
            }
            if (start > from) {
                if (deadline.isExpired()) {
                    throw new TransportException(Kind.TIMEOUT, "shm: deadline passed after " + (start - from) + " of "
                            + (to - from) + " ops on buffer " + bufferId + " were copied");
                }
                if (!peer.table().isCurrent(grant.slot())) {
                    throw new ShmCopy.Withdrawn(ShmProtocol.denied(bufferId));
                }
            }
            if (mapped == null && !checkedAlive) {
                checkAlive(peer, copier, bufferId);     // the pid still names the owner: no write into another process
                checkedAlive = true;
            }
            if (!cancel.begin()) {
                throw new TransportException(Kind.INTERNAL, "shm: op on buffer " + bufferId + " cancelled");
            }
            try {
                if (mapped != null) {
                    copyMapped(ops, start, end, mapped, bufferId);
                } else {
                    copyBySystemCall(ops, start, end, bytes, grant, peer, copier);
                }
            } finally {
                cancel.end();
            }
            if (mapped == null || !peer.table().ownerAlive()) {     // the liveness word: believed for a mapping alone
                checkAlive(peer, copier, bufferId);     // the owner lived through the piece (and the next may start)
            }
        }
    }

    private static void checkAlive(ShmPeer peer, ProcessVmCopier copier, long bufferId) {
        if (copier.hasExited(peer.pidfd())) {
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: the owner process has exited (buffer "
                    + bufferId + " at " + peer + ")");
        }
    }

    private static void copyMapped(List<TransportOp> ops, int start, int end, MemorySegment mapped, long bufferId) {
        for (int i = start; i < end; i++) {
            TransportOp op = ops.get(i);
            try {
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL) {
                    MemorySegment.copy(mapped, op.remoteOffset(), op.local(), 0, op.length());
                } else {
                    MemorySegment.copy(op.local(), 0, mapped, op.remoteOffset(), op.length());
                }
            } catch (IllegalStateException e) {
                if (!op.local().scope().isAlive()) {
                    throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment's arena was closed", e);
                }
                // another thread of this process found the buffer released and unmapped it
                throw new ShmCopy.Withdrawn(ShmProtocol.denied(bufferId));
            }
        }
    }

    /**
     * One vectored call per direction for the piece's reads and writes (a run mixing them is cut
     * where the direction changes); a call the kernel ends early is finished op by op, which
     * names the failure exactly.
     */
    private static void copyBySystemCall(List<TransportOp> ops, int start, int end, long bytes,
                                         ShmProtocol.Grant grant, ShmPeer peer, ProcessVmCopier copier) {
        for (int first = start, last; first < end; first = last) {
            boolean read = ops.get(first).type() == TransportOp.OpType.READ_INTO_LOCAL;
            long queuedBytes = 0;
            long low = Long.MAX_VALUE;
            long high = 0;
            last = first;
            while (last < end && (ops.get(last).type() == TransportOp.OpType.READ_INTO_LOCAL) == read) {
                TransportOp op = ops.get(last++);
                low = Math.min(low, op.remoteOffset());
                high = Math.max(high, op.remoteOffset() + op.length());
                queuedBytes += op.length();
            }
            if (read && last - first > 1 && high - low <= ProcessVmCopier.SCRATCH_BYTES
                    && high - low <= SPAN_SPARSENESS * queuedBytes + 4096
                    && readSpan(ops, first, last, low, high, grant, peer, copier)) {
                continue;
            }
            if (!read && last - first > 1 && high - low <= ProcessVmCopier.SCRATCH_BYTES
                    && coverWithoutGaps(ops, first, last)
                    && writeSpan(ops, first, last, low, high, grant, peer, copier)) {
                continue;
            }
            try {
                for (int i = first; i < last; i++) {
                    TransportOp op = ops.get(i);
                    copier.queue(op.local(), 0, grant.address() + op.remoteOffset(), op.length());
                }
            } catch (IllegalStateException e) {
                copier.clearQueue();
                throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: "
                        + e.getMessage(), e);
            }
            long moved = read ? copier.readQueued(peer.pid()) : copier.writeQueued(peer.pid());
            if (moved == queuedBytes) {
                continue;
            }
            if (moved < 0) {
                throw ShmCopy.failure(read, ops.get(first).remote().bufferId(), peer, (int) -moved, grant.slot().readOnly());
            }
            finishOneByOne(ops, first, last, moved, read, grant, peer, copier);
        }
    }

    /** A span read may bring this many times the bytes its ops ask for (plus a page), no more. */
    private static final long SPAN_SPARSENESS = 8;

    /**
     * Reads ops {@code [first, last)}, whose remote ranges all lie in {@code [low, high)}, with one
     * {@code process_vm_readv} of that span into the copier's scratch memory, then copies each
     * op's part out. The kernel pins the remote pages once per remote iovec entry: one entry for
     * the span instead of one per op (a few hundred nanoseconds each) is what makes small reads
     * cheap. All the ops' bytes come from the one call: as if they ran at the same instant.
     *
     * @return false when the call failed or moved less than the span (nothing was copied out:
     *         the op-by-op vectored call then runs and names the failure exactly)
     */
    private static boolean readSpan(List<TransportOp> ops, int first, int last, long low, long high,
                                    ShmProtocol.Grant grant, ShmPeer peer, ProcessVmCopier copier) {
        MemorySegment scratch = copier.scratch();
        if (copier.read(peer.pid(), scratch, 0, grant.address() + low, high - low) != 0) {
            return false;
        }
        for (int i = first; i < last; i++) {
            TransportOp op = ops.get(i);
            try {
                MemorySegment.copy(scratch, op.remoteOffset() - low, op.local(), 0, op.length());
            } catch (IllegalStateException e) {
                throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: "
                        + e.getMessage(), e);
            }
        }
        return true;
    }

    /**
     * Whether the ranges of ops {@code [first, last)}, taken in order, each touch or overlap the
     * union of the ones before: then together they cover their span without a gap, and a write of
     * the span changes no byte that no op writes. (Some gapless orders, such as a range bridging
     * two earlier ones, are not recognised: those go op by op.)
     */
    private static boolean coverWithoutGaps(List<TransportOp> ops, int first, int last) {
        TransportOp op = ops.get(first);
        long low = op.remoteOffset();
        long high = low + op.length();
        for (int i = first + 1; i < last; i++) {
            op = ops.get(i);
            long start = op.remoteOffset();
            long end = start + op.length();
            if (start > high || end < low) {
                return false;
            }
            low = Math.min(low, start);
            high = Math.max(high, end);
        }
        return true;
    }

    /**
     * Writes ops {@code [first, last)}, whose remote ranges cover {@code [low, high)} without a
     * gap, with one {@code process_vm_writev} of that span: each op's bytes are laid into the
     * copier's scratch memory at their place, in the action's order (a later op's bytes over an
     * earlier one's, as the ops one after another would leave them), then the span goes in one
     * remote iovec entry: one page pin for the lot instead of one per op.
     *
     * @return false when the call failed or moved less than the span (the op-by-op vectored call
     *         then runs, writes every op again in order and names the failure exactly)
     */
    private static boolean writeSpan(List<TransportOp> ops, int first, int last, long low, long high,
                                     ShmProtocol.Grant grant, ShmPeer peer, ProcessVmCopier copier) {
        MemorySegment scratch = copier.scratch();
        for (int i = first; i < last; i++) {
            TransportOp op = ops.get(i);
            try {
                MemorySegment.copy(op.local(), 0, scratch, op.remoteOffset() - low, op.length());
            } catch (IllegalStateException e) {
                throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: "
                        + e.getMessage(), e);
            }
        }
        return copier.write(peer.pid(), scratch, 0, grant.address() + low, high - low) == 0;
    }

    /** The kernel moved {@code moved} bytes of ops {@code [first, last)}: the rest, op by op. */
    private static void finishOneByOne(List<TransportOp> ops, int first, int last, long moved, boolean read,
                                       ShmProtocol.Grant grant, ShmPeer peer, ProcessVmCopier copier) {
        for (int i = first; i < last; i++) {
            TransportOp op = ops.get(i);
            long skip = Math.min(moved, op.length());
            moved -= skip;
            if (skip == op.length()) {
                continue;
            }
            long remote = grant.address() + op.remoteOffset() + skip;
            int errno;
            try {
                errno = read ? copier.read(peer.pid(), op.local(), skip, remote, op.length() - skip)
                        : copier.write(peer.pid(), op.local(), skip, remote, op.length() - skip);
            } catch (IllegalStateException e) {
                throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: "
                        + e.getMessage(), e);
            }
            if (errno != 0) {
                throw ShmCopy.failure(read, op.remote().bufferId(), peer, errno, grant.slot().readOnly());
            }
        }
    }
}
