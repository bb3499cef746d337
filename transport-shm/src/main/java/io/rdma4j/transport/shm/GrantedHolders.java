package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.ParkedFd;
import io.rdma4j.transport.shm.ffi.ProcessVmCopier;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

import static io.rdma4j.transport.shm.AccessTable.LONG;
import static io.rdma4j.transport.shm.AccessTable.ROW;
import static io.rdma4j.transport.shm.AccessTable.ROWS;
import static io.rdma4j.transport.shm.AccessTable.ROWS_SIZE;
import static io.rdma4j.transport.shm.AccessTable.ROW_ENTRIES;

/**
 * The owner's side of an {@link AccessTable} towards its holders: a record per holder process it
 * granted a buffer (by {@code SO_PEERCRED} pid), with that process's rows file, its pidfd, the
 * buffers granted to it and whether it stalled a release; and a release's wait for the copies in
 * flight of the holders granted that buffer. {@link AccessTable} ("Hostile holders") says what a
 * stalled holder costs; its threading rules hold here.
 */
final class GrantedHolders {

    /** Logged under {@link AccessTable}'s name, as the table's other lines. */
    private static final System.Logger LOG = System.getLogger(AccessTable.class.getName());

    private final ConcurrentHashMap<Long, Holder> holders = new ConcurrentHashMap<>();    // by pid
    private final java.util.Queue<Holder> retired = new java.util.concurrent.ConcurrentLinkedQueue<>();  // closed by awaitQuiet/close

    /** See {@link AccessTable#grant}. */
    ParkedFd grant(long pid, AccessTable.Slot slot) throws IOException {
        Holder h = holders.get(pid);
        if (h != null && h.exited()) {      // its pid came back: a new process; the old record is closed by the next revoke
            holders.remove(pid, h);
            retired.add(h);
            h = null;
        }
        if (h == null) {
            h = new Holder(pid);
            holders.put(pid, h);
        }
        if (h.stalled) {
            throw new IOException("holder pid " + pid + " kept copying a released buffer past the release's wait");
        }
        h.granted.add(slot);
        return h.parked;
    }

    /**
     * The wait of {@link AccessTable#revoke}, once the slot's generation is 0: until no holder
     * granted the buffer announces a copy of it (or that holder exited), or {@code maxWait} is over
     * (that holder is then stalled); then closes the records of holders that exited.
     */
    AccessTable.Revoked awaitQuiet(AccessTable.Slot slot, Duration maxWait) {
        long deadline = System.nanoTime() + maxWait.toNanos();
        List<Long> waitedOut = new ArrayList<>();
        List<Long> ignored = new ArrayList<>();
        try (ProcessVmCopier poller = new ProcessVmCopier()) {
            for (Holder h : holders.values()) {
                if (!h.granted.remove(slot)) {
                    continue;       // never granted this buffer: its rows are not waited for
                }
                if (h.stalled) {
                    if (h.announces(slot)) {
                        ignored.add(h.pid);
                    }
                    continue;
                }
                if (!h.awaitQuiet(slot, deadline, poller)) {
                    h.stalled = true;
                    waitedOut.add(h.pid);
                    LOG.log(System.Logger.Level.WARNING, "shm: holder pid {0} still announced a copy of a released "
                            + "buffer after {1}; no later release waits for it, and it is granted nothing more",
                            h.pid, maxWait);
                }
            }
        }
        holders.values().removeIf(h -> {
            if (h.exited()) {
                retired.add(h);
                return true;
            }
            return false;
        });
        for (Holder h; (h = retired.poll()) != null; ) {
            h.close();
        }
        return waitedOut.isEmpty() && ignored.isEmpty() ? AccessTable.Revoked.QUIET
                : new AccessTable.Revoked(waitedOut, ignored);
    }

    /** See {@link AccessTable#entries}. */
    long entries() {
        long sum = 0;
        for (Holder h : holders.values()) {
            try {
                for (int row = 0; row < ROWS; row++) {
                    sum += (long) LONG.getVolatile(h.rows, ROW * row + ROW_ENTRIES);
                }
            } catch (IllegalStateException closedMeanwhile) {
                // a holder that exited, closed by a revoke on another thread: it copies nothing more
            }
        }
        return sum;
    }

    /** Closes every holder's record (its rows file and pidfd). */
    void close() {
        holders.values().forEach(Holder::close);
        holders.clear();
        retired.forEach(Holder::close);
        retired.clear();
    }

    /** One holder process's rows file, the process's pidfd, and what it was granted. */
    private static final class Holder {
        final long pid;
        final Arena arena = Arena.ofShared();
        final MemorySegment rows;
        final ParkedFd parked;
        final int pidfd;                     // -1 when pidfd_open failed: then its pid is asked instead
        final java.util.Set<AccessTable.Slot> granted = ConcurrentHashMap.newKeySet();
        volatile boolean stalled;
        private boolean closed;

        Holder(long pid) throws IOException {
            this.pid = pid;
            try {
                MemoryFile.Mapped file = MemoryFile.create("rdma4j-shm-rows", ROWS_SIZE, arena, m -> { });
                this.rows = file.segment();
                this.parked = file.parked();
            } catch (IOException | RuntimeException e) {
                arena.close();
                throw e;
            }
            int fd = Libc.pidfdOpen(pid);
            this.pidfd = fd >= 0 ? fd : -1;
        }

        boolean exited() {
            if (pidfd < 0) {
                return ProcessHandle.of(pid).map(p -> !p.isAlive()).orElse(true);
            }
            try (ProcessVmCopier poller = new ProcessVmCopier()) {
                return poller.hasExited(pidfd);
            }
        }

        boolean announces(AccessTable.Slot slot) {
            for (int row = 0; row < ROWS; row++) {
                if (announces(row, slot)) {
                    return true;
                }
            }
            return false;
        }

        private boolean announces(int row, AccessTable.Slot slot) {
            long base = ROW * row;
            return (long) LONG.getVolatile(rows, base) != 0
                    && (long) LONG.getVolatile(rows, base + 16) == slot.generation()
                    && (long) LONG.getVolatile(rows, base + 8) == slot.index();
        }

        /** Waits until no row announces {@code slot} or this holder exited: true; false when {@code deadline} passed first. */
        boolean awaitQuiet(AccessTable.Slot slot, long deadline, ProcessVmCopier poller) {
            for (int row = 0; row < ROWS; row++) {
                int spins = 0;
                while (announces(row, slot)) {
                    if (pidfd >= 0 ? poller.hasExited(pidfd) : exited()) {
                        return true;
                    }
                    if (System.nanoTime() - deadline > 0) {
                        return false;
                    }
                    if (++spins < 1000) {
                        Thread.onSpinWait();
                    } else {
                        LockSupport.parkNanos(20_000);
                    }
                }
            }
            return true;
        }

        synchronized void close() {
            if (!closed) {
                closed = true;
                arena.close();
                if (pidfd >= 0) {
                    Libc.close(pidfd);
                }
            }
        }
    }
}
