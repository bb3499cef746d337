package io.rdma4j.shm;

import io.rdma4j.shm.ffi.MemoryFile;
import io.rdma4j.shm.ffi.ParkedFd;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.BitSet;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The small table, shared between a buffer owner and the holders copying its memory, that makes
 * "no access after release" hold even though holders copy without asking the owner.
 *
 * <p>The owner creates it in a memory file ({@code memfd_create}), maps it and parks the
 * descriptor ({@link ParkedFd}: not reachable through {@code /proc/<pid>/fd}); a holder gets the
 * descriptor handed over ({@code SCM_RIGHTS}) with its first grant, after the owner checked that
 * holder's key for some buffer, and maps the same pages. Atomic operations on the mapping are
 * atomic across both processes. The table coordinates holders that follow this protocol; it
 * guards nothing against a hostile holder that was handed it, which may write it (the file's size
 * is sealed, so it cannot shrink it under the owner): such a holder can withdraw buffers early and
 * pin hazard rows, which {@link #revoke} bounds by its wait.
 * <pre>
 *   header   magic, slot count, hazard count
 *   slots    one long per registered buffer: its generation, 0 when free or released
 *   hazards  one row per copy in flight: holder pid, slot, generation
 * </pre>
 *
 * <p><b>Protocol</b> (hazard pointers across processes). A holder about to copy buffer
 * {@code (slot, generation)} claims a row with a CAS on its pid, writes the slot and then the
 * generation with volatile stores, reads the slot's generation with a volatile load, and copies
 * only if it still matches; it clears the row afterwards. The owner releasing a buffer first
 * sets the slot's generation to 0 (volatile), then waits until no row announces that slot and
 * generation. Volatile accesses are sequentially consistent, so either the holder sees 0 and
 * does not copy, or the owner sees the row and waits for the copy to end: once
 * {@link #revoke} returns, no holder touches the buffer, and the owner may free or reuse it.
 * A row of a holder that died is ignored (its pid is no longer alive).
 *
 * <p><b>Threading.</b> Slot assignment ({@link #assign}, {@link #revoke}) is for one thread at a
 * time (the manager's registration thread); {@link #withdraw} for any owner thread;
 * {@link #enter}/{@link #exit} for any holder thread.
 * {@link #close()} is idempotent and must follow the last use.
 */
public final class AccessTable implements AutoCloseable {

    /** Concurrent buffers the table can serve; more are refused at registration. */
    public static final int SLOTS = 1 << 16;
    /** Copies in flight at once, over all holders. */
    public static final int HAZARDS = 4096;

    private static final long MAGIC = 0x7264_6d61_346a_5348L;    // "rdma4jSH"
    private static final long HEADER = 64;
    private static final long HAZARD_ROW = 32;
    private static final long SIZE = HEADER + 8L * SLOTS + HAZARD_ROW * HAZARDS;
    private static final VarHandle LONG = JAVA_LONG.varHandle();
    private static final long SELF = ProcessHandle.current().pid();

    private final Arena arena;
    private final MemorySegment table;
    private final ParkedFd parked;          // owner: the memfd, parked for hand-overs; holder: null
    private final BitSet used;              // owner: slots in use; holder: null
    private long nextGeneration = 1;
    private boolean closed;

    private AccessTable(Arena arena, MemorySegment table, ParkedFd parked, BitSet used) {
        this.arena = arena;
        this.table = table;
        this.parked = parked;
        this.used = used;
    }

    /**
     * Creates the owner's table in a new memory file and maps it.
     *
     * @return the table; the caller owns it and closes it after the last {@link #revoke}
     * @throws IOException if the memory file cannot be created or mapped (the message names the call)
     */
    public static AccessTable create() throws IOException {
        Arena arena = Arena.ofShared();
        try {
            MemoryFile.Mapped file = MemoryFile.create("rdma4j-shm-access", SIZE, arena, f -> { });
            AccessTable t = new AccessTable(arena, file.segment(), file.parked(), new BitSet(SLOTS));
            t.table.set(JAVA_LONG, 8, SLOTS);
            t.table.set(JAVA_LONG, 16, HAZARDS);
            LONG.setVolatile(t.table, 0L, MAGIC);
            return t;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * Maps the owner's table from the descriptor it handed over. The descriptor stays the
     * caller's, who closes it (the mapping keeps the pages).
     *
     * @param fd the table's memory file, as received from the owner
     * @return the holder's view; the caller closes it when done with the owner
     * @throws IOException if the file cannot be mapped or holds no table
     */
    public static AccessTable attach(int fd) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            AccessTable t = new AccessTable(arena, MemoryFile.map(fd, SIZE, arena), null, null);
            if ((long) LONG.getVolatile(t.table, 0L) != MAGIC || t.table.get(JAVA_LONG, 8) != SLOTS
                    || t.table.get(JAVA_LONG, 16) != HAZARDS) {
                throw new IOException("the owner's descriptor holds no rdma4j access table");
            }
            return t;
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The owner's parked descriptor for the table, which it hands to holders with their first grant.
     *
     * @return the parked descriptor, closed with this table
     * @throws IllegalStateException on a holder's view
     */
    public ParkedFd parked() {
        requireOwner();
        return parked;
    }

    /**
     * Where this process mapped the table; a holder's probe copy reads the table's header there.
     *
     * @return the mapping's address in this process
     */
    public long address() {
        return table.address();
    }

    /**
     * Owner: gives a newly registered buffer a free slot and a generation never used before in
     * this table, and publishes it.
     *
     * @return the slot and its generation, or empty when all {@link #SLOTS} slots are in use
     */
    public Optional<Slot> assign() {
        requireOwner();
        int slot = used.nextClearBit(0);
        if (slot >= SLOTS) {
            return Optional.empty();
        }
        used.set(slot);
        long generation = nextGeneration++;
        LONG.setVolatile(table, slotOffset(slot), generation);
        return Optional.of(new Slot(slot, generation));
    }

    /**
     * Owner: ends access to {@code slot}: no copy starts after this call, and it returns once every
     * copy that had started has ended (or its holder died), or when {@code maxWait} is over.
     * The slot is then free for another buffer. Revoking a free slot does nothing.
     *
     * @param slot    what {@link #assign} returned
     * @param maxWait how long to wait for copies in flight; a live holder's copy takes at most
     *                one chunk's time
     * @return true when no copy is in flight any more; false when {@code maxWait} ran out first
     *         (a holder stopped mid-copy, e.g. by SIGSTOP)
     */
    public boolean revoke(Slot slot, Duration maxWait) {
        requireOwner();
        long now = (long) LONG.getVolatile(table, slotOffset(slot.index()));
        if (!used.get(slot.index()) || (now != slot.generation() && now != 0)) {
            return true;        // free, or another buffer's since
        }
        LONG.setVolatile(table, slotOffset(slot.index()), 0L);      // 0 already when withdrawn
        long deadline = System.nanoTime() + maxWait.toNanos();
        boolean quiet = true;
        for (int row = 0; row < HAZARDS; row++) {
            int spins = 0;
            while (announces(row, slot)) {
                long pid = (long) LONG.getVolatile(table, hazardOffset(row));
                if (pid == 0 || !isAlive(pid)) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    quiet = false;
                    break;
                }
                if (++spins < 1000) {
                    Thread.onSpinWait();
                } else {
                    LockSupport.parkNanos(20_000);
                }
            }
        }
        used.clear(slot.index());
        return quiet;
    }

    /**
     * Owner, from any thread: ends new access to {@code slot} now, without waiting for copies in
     * flight and without freeing the slot: holders that enter afterwards find the buffer released.
     * For a buffer whose memory went away under the owner (its arena closed without release);
     * {@link #revoke} still follows at the release, and waits and frees the slot then. Revoking
     * must happen at most once per assignment (the manager releases each id once).
     *
     * @param slot what {@link #assign} returned
     * @return true when this call ended the access; false when it had already ended
     */
    public boolean withdraw(Slot slot) {
        requireOwner();
        return LONG.compareAndSet(table, slotOffset(slot.index()), slot.generation(), 0L);
    }

    private boolean announces(int row, Slot slot) {
        long base = hazardOffset(row);
        return (long) LONG.getVolatile(table, base) != 0
                && (long) LONG.getVolatile(table, base + 16) == slot.generation()
                && (long) LONG.getVolatile(table, base + 8) == slot.index();
    }

    /**
     * Holder: announces a copy of {@code slot} and checks that the buffer is still published.
     * On success the caller copies, then calls {@link #exit} with the returned row exactly once.
     *
     * @param slot the buffer's slot and generation, as the owner sent them
     * @return the claimed row (&ge; 0); {@link #RELEASED} when the buffer was released (nothing
     *         claimed); {@link #BUSY} when every row is taken by live holders
     */
    public int enter(Slot slot) {
        int start = (int) (Thread.currentThread().threadId() * 0x9E3779B1L >>> 20) & (HAZARDS - 1);
        int row = claim(start, false);
        if (row < 0) {
            row = claim(start, true);       // every row taken: reclaim those of holders that died
        }
        if (row < 0) {
            return BUSY;
        }
        long base = hazardOffset(row);
        LONG.setVolatile(table, base + 8, (long) slot.index());
        LONG.setVolatile(table, base + 16, slot.generation());
        if (isCurrent(slot)) {
            return row;
        }
        exit(row);
        return RELEASED;
    }

    /** Claims a free row (or, with {@code reclaim}, one whose holder died) by CAS on its pid; -1 if none. */
    private int claim(int start, boolean reclaim) {
        for (int i = 0; i < HAZARDS; i++) {
            int row = (start + i) & (HAZARDS - 1);
            long base = hazardOffset(row);
            long pid = (long) LONG.getVolatile(table, base);
            if (pid == 0 ? LONG.compareAndSet(table, base, 0L, SELF)
                    : reclaim && pid != SELF && !isAlive(pid) && LONG.compareAndSet(table, base, pid, SELF)) {
                return row;
            }
        }
        return -1;
    }

    /**
     * Whether {@code slot} still holds its generation (the buffer was not released). A holder may
     * check this between chunks of a long copy to stop early.
     *
     * @param slot the buffer's slot and generation
     * @return true while the buffer is published
     */
    public boolean isCurrent(Slot slot) {
        return (long) LONG.getVolatile(table, slotOffset(slot.index())) == slot.generation();
    }

    /**
     * Holder: ends the copy announced by {@link #enter}.
     *
     * @param row what {@link #enter} returned
     */
    public void exit(int row) {
        long base = hazardOffset(row);
        LONG.setVolatile(table, base + 16, 0L);
        LONG.setVolatile(table, base + 8, -1L);
        LONG.setVolatile(table, base, 0L);
    }

    /** {@link #enter}'s answer when the buffer was released. */
    public static final int RELEASED = -1;
    /** {@link #enter}'s answer when no row is free. */
    public static final int BUSY = -2;

    private static long slotOffset(int slot) {
        return HEADER + 8L * slot;
    }

    private static long hazardOffset(int row) {
        return HEADER + 8L * SLOTS + HAZARD_ROW * row;
    }

    private static boolean isAlive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private void requireOwner() {
        if (used == null) {
            throw new IllegalStateException("only the owner's table assigns and revokes slots");
        }
    }

    /**
     * Unmaps the table and, on the owner, closes its parked descriptor. Idempotent. Holders that
     * mapped the owner's table keep their own mapping of the same pages.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        arena.close();
    }

    /**
     * One published buffer: its slot in the table and its generation there.
     *
     * @param index      the slot, in {@code [0, SLOTS)}
     * @param generation never 0; unique among this table's assignments
     */
    public record Slot(int index, long generation) {
        /**
         * Validates.
         *
         * @throws IllegalArgumentException if {@code index} is out of range or {@code generation} is 0
         */
        public Slot {
            if (index < 0 || index >= SLOTS || generation == 0) {
                throw new IllegalArgumentException("bad slot " + index + " / generation " + generation);
            }
        }
    }
}
