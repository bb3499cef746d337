package io.rdma4j.shm;

import io.rdma4j.shm.ffi.Errno;
import io.rdma4j.shm.ffi.ProcessVmCopier;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.TransportOp;

import java.lang.foreign.MemorySegment;

/**
 * One announced op's copy, run as one or several ranges (possibly on several threads), each in
 * pieces of at most {@code chunk} bytes: {@link MemorySegment#copy} when the owner's memory file
 * is mapped here, {@code process_vm_readv}/{@code writev} otherwise. Before every piece: the
 * deadline, the buffer's release, cancellation and (for mappings, which outlive their owner) the
 * owner's liveness. The caller holds the op's row in the owner's access table for the whole copy.
 *
 * @param op       the op
 * @param mapped   the buffer mapped here, or null for system calls
 * @param grant    what the owner granted
 * @param peer     the owner
 * @param deadline the op's deadline
 * @param cancel   the op's cancellation
 * @param chunk    the largest piece
 */
record ShmCopy(TransportOp op, MemorySegment mapped, ShmProtocol.Grant grant, ShmPeer peer, Deadline deadline,
               Cancellation cancel, long chunk) {

    /**
     * Copies bytes {@code [from, to)} of the op.
     *
     * @param copier this thread's native scratch
     * @throws TransportException of the kind TCP gives the same failure
     */
    void range(long from, long to, ProcessVmCopier copier) {
        boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
        for (long done = from, n; done < to; done += n) {
            n = Math.min(chunk, to - done);
            if (done > from && mapped != null) {
                checkOwnerAlive(copier);
            }
            beginPiece(done > 0);
            try {
                if (mapped != null) {
                    copyMapped(read, done, n);
                } else {
                    copyBySystemCall(read, done, n, copier);
                }
            } finally {
                cancel.end();
            }
        }
    }

    /**
     * After a copy through a mapping: fails it when the owner exited meanwhile (the mapping
     * outlives the owner, so the copy itself cannot tell). No-op for system calls, which fail
     * with {@code ESRCH} by themselves.
     */
    void checkOwnerAlive(ProcessVmCopier copier) {
        if (mapped != null && copier.hasExited(peer.pidfd())) {
            throw new TransportException(Kind.PEER_UNREACHABLE, "shm: the owner process has exited (buffer "
                    + op.remote().bufferId() + " at " + peer + ")");
        }
    }

    /** The deadline, the release (not on the op's first piece: entering the table checked it), cancellation. */
    private void beginPiece(boolean notFirst) {
        long id = op.remote().bufferId();
        if (notFirst && deadline.isExpired()) {
            throw new TransportException(Kind.TIMEOUT, "shm: deadline passed before " + op.length()
                    + " bytes of buffer " + id + " were copied");
        }
        if (notFirst && !peer.table().isCurrent(grant.slot())) {
            throw new Withdrawn(ShmProtocol.denied(id));
        }
        if (!cancel.begin()) {
            throw new TransportException(Kind.INTERNAL, "shm: op on buffer " + id + " cancelled");
        }
    }

    /**
     * The buffer went out of reach mid-copy: released (the table says so, or another thread
     * unmapped it) or its memory gone from the owner. The holder then asks the owner why, whose
     * answer is the op's failure; this exception's text is the failure when the owner cannot say.
     */
    static final class Withdrawn extends TransportException {
        Withdrawn(String message) {
            super(Kind.REMOTE_ACCESS, message);
        }
    }

    private void copyMapped(boolean read, long at, long n) {
        try {
            if (read) {
                MemorySegment.copy(mapped, op.remoteOffset() + at, op.local(), at, n);
            } else {
                MemorySegment.copy(op.local(), at, mapped, op.remoteOffset() + at, n);
            }
        } catch (IllegalStateException e) {
            if (!op.local().scope().isAlive()) {
                throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment's arena was closed", e);
            }
            // another thread of this process found the buffer released and unmapped it
            throw new Withdrawn(ShmProtocol.denied(op.remote().bufferId()));
        }
    }

    private void copyBySystemCall(boolean read, long at, long n, ProcessVmCopier copier) {
        long remote = grant.address() + op.remoteOffset() + at;
        int errno;
        try {
            errno = read ? copier.read(peer.pid(), op.local(), at, remote, n)
                    : copier.write(peer.pid(), op.local(), at, remote, n);
        } catch (IllegalStateException e) {
            throw new TransportException(Kind.LOCAL_ACCESS, "shm: the local segment cannot be used: " + e.getMessage(), e);
        }
        if (errno == 0) {
            return;
        }
        String call = (read ? "process_vm_readv" : "process_vm_writev") + " of buffer " + op.remote().bufferId()
                + " at " + peer + ": " + Errno.describe(errno);
        throw switch (errno) {
            case Errno.ESRCH -> new TransportException(Kind.PEER_UNREACHABLE, "shm: the owner process has exited ("
                    + call + ")");
            case Errno.EFAULT -> new Withdrawn("shm: the buffer's memory is no longer mapped in the owner, closed "
                    + "without release? (" + call + ")");
            default -> new TransportException(Kind.REMOTE_FAILURE, "shm: " + call);
        };
    }
}
