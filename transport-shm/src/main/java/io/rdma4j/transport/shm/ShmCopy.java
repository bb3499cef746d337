package io.rdma4j.transport.shm;

import io.rdma4j.unix.Errno;
import io.rdma4j.transport.shm.ffi.ProcessVmCopier;
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
 * deadline, the buffer's release and cancellation. The caller holds the op's row in the owner's
 * access table for the whole copy.
 *
 * <p><b>The right process.</b> A system call names the owner by pid, which the kernel may give
 * to another process once the owner died and was reaped. So the owner's pidfd (which names the
 * process itself) is asked before the first system-call piece of a range and after every piece
 * (which is also the check before the next one): a piece that
 * starts after the owner died does not run, and an op with a piece that overlapped its death
 * fails ({@link Kind#PEER_UNREACHABLE}). What that promises: a failed read's local segment is
 * not reported as filled (its bytes are unspecified); no write starts into a process the pid
 * names after the owner's death was visible. What it cannot: between the check before a piece
 * and the system call there remain the few microseconds in which the owner could die, be reaped
 * and have its pid taken by a new process of the same user, which needs the kernel to hand out
 * every other pid in between (or a privileged {@code ns_last_pid} write); the check after the
 * piece then fails the op, but the bytes went where that pid pointed.
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
            beginPiece(done > 0);
            try {
                if (mapped != null) {
                    copyMapped(read, done, n);
                } else {
                    if (done == from) {             // later pieces: the check after the previous one is this check
                        checkOwnerAlive(copier);    // the pid still names the owner: no write into another process
                    }
                    copyBySystemCall(read, done, n, copier);
                }
            } finally {
                cancel.end();
            }
            checkOwnerAlive(copier);                // the owner lived through the piece (and the next may start)
        }
    }

    /**
     * Fails the op when the owner has exited, as its pidfd says: the pid the system calls use may
     * name another process by now, and a mapping outlives its owner, so neither copy can tell by
     * itself. After a copy into a mapping, the owner's liveness word
     * ({@link AccessTable#ownerAlive()}) answers first, without a system call: a lie there (the
     * owner writes the word) would only let copies into the dead owner's own memory file succeed;
     * a copy by pid always asks the pidfd.
     */
    void checkOwnerAlive(ProcessVmCopier copier) {
        if (mapped != null && peer.table().ownerAlive()) {
            return;                 // the owner's liveness word, no system call: believed for a mapping alone
        }
        if (copier.hasExited(peer.pidfd())) {
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
        if (errno != 0) {
            throw failure(read, op.remote().bufferId(), peer, errno, grant.slot().readOnly());
        }
    }

    /**
     * The failure of a {@code process_vm_readv}/{@code writev} on a buffer of {@code peer}, of the
     * kind TCP gives the same failure: the owner gone, the buffer's memory gone (withdrawn), or
     * another refusal. A write the kernel refused ({@code EFAULT}) into a buffer the owner
     * published read-only fails as the owner's refusal of it would: the holder refuses such writes
     * before any system call, so this is only the backstop ({@code PROT_READ} pages refuse the
     * write even when that check was skipped).
     *
     * @param readOnly whether the owner published the buffer read-only ({@link AccessTable.Slot#readOnly()})
     */
    static TransportException failure(boolean read, long bufferId, ShmPeer peer, int errno, boolean readOnly) {
        String call = (read ? "process_vm_readv" : "process_vm_writev") + " of buffer " + bufferId
                + " at " + peer + ": " + Errno.describe(errno);
        if (!read && errno == Errno.EFAULT && readOnly) {
            return ErrorCode.READ_ONLY.toException(io.rdma4j.spi.BufferAccessException.readOnly(bufferId).getMessage()
                    + " (" + call + ")");
        }
        return switch (errno) {
            case Errno.ESRCH -> new TransportException(Kind.PEER_UNREACHABLE, "shm: the owner process has exited ("
                    + call + ")");
            case Errno.EFAULT -> new Withdrawn("shm: the buffer's memory is no longer mapped in the owner, closed "
                    + "without release?" + (read ? "" : " Or its pages are mapped read-only there, registered as writable "
                    + "memory (register read-only memory as a read-only segment)") + " (" + call + ")");
            default -> new TransportException(Kind.REMOTE_FAILURE, "shm: " + call);
        };
    }
}
