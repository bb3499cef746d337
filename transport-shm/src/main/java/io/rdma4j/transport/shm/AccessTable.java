package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.LivenessLock;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.ParkedFd;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The small tables, shared between a buffer owner and the holders copying its memory, that make
 * "no access after release" hold even though holders copy without asking the owner.
 *
 * <p><b>Files.</b> The owner keeps two kinds of memory file ({@code memfd_create}), each parked
 * ({@link ParkedFd}: not reachable through {@code /proc/<pid>/fd}) and handed over
 * ({@code SCM_RIGHTS}) only with a grant, after the owner checked the holder's key:
 * <ul>
 * <li>the <b>slots</b> file, one for all holders: one long per registered buffer, its generation,
 *     0 when free or released. Only the owner writes it: it is sealed against every new writable
 *     mapping ({@code F_SEAL_FUTURE_WRITE}), so holders map it read-only and cannot forge,
 *     revive or withdraw a buffer. After the slots, the owner's liveness word
 *     ({@link LivenessLock}, {@link #ownerAlive()}), held by an owner thread while the table is open;</li>
 * <li>a <b>rows</b> file per holder process (by its {@code SO_PEERCRED} pid): one row per copy it
 *     has in flight (claimed, slot, generation, and a count of the copies the row announced so
 *     far), written by that holder, read by the owner ({@link GrantedHolders}).</li>
 * </ul>
 *
 * <p><b>Protocol</b> (hazard pointers across processes). A holder about to copy buffer
 * {@code (slot, generation)} claims a row of its own file with a CAS, writes the slot and then the
 * generation with volatile stores, reads the slot's generation with a volatile load, and copies
 * only if it still matches; it clears the row afterwards. The owner releasing a buffer first
 * sets the slot's generation to 0 (volatile), then waits until no row of a holder it granted that
 * buffer to announces it. Volatile accesses are sequentially consistent, so either the holder sees
 * 0 and does not copy, or the owner sees the row and waits for the copy to end.
 *
 * <p><b>Watched buffers and a dormant owner.</b> A buffer whose memory may go away without a
 * release (the caller's memory: its arena may close first) is <em>watched</em>: its generation has
 * {@link #WATCHED} set, and the owner looks at such buffers' arenas while holders copy
 * ({@code ShmTransport}). Once a look finds that no holder announced a copy since the one before
 * ({@link #entries}), the owner goes <em>dormant</em> ({@link #setDormant}): it sets the flag in
 * the slots file first, then looks once more, and stops looking. A holder about to copy a watched
 * buffer that finds the flag set ({@link #enter} answers {@link #DORMANT}) must wake the owner
 * before it copies: it asks for the buffer again, and the owner, woken, looks at every watched
 * buffer, clears the flag and looks again every second. Volatile accesses order the two sides
 * as for release: a holder that found the owner awake announced its copy before the owner's last
 * look.
 *
 * <p><b>Hostile holders.</b> A holder can write only its own rows, and the owner waits only for
 * holders it granted the buffer being released: announcing other buffers costs their releases
 * nothing. A holder that keeps a row of a buffer it was granted past the release's wait (a hostile
 * one, or one stopped mid-copy, e.g. by SIGSTOP) makes that one release wait its full
 * {@code maxWait}; it is then marked <em>stalled</em>: no later release waits for it, and it is
 * granted nothing more ({@link #grant} refuses). So one holder delays at most one release, by at
 * most {@code maxWait}, in the owner's lifetime. A stalled holder that was only stopped may finish
 * its piece after the release returned: into a memory file, which it still maps (pages the owner
 * no longer uses); by cross-memory attach, into memory the owner may have reused (which a process
 * allowed to cross-memory attach could write anyway).
 *
 * <p><b>Threading.</b> {@link #assign} and {@link #revoke} for one thread at a time (the
 * manager's registration thread); {@link #grant} for one thread at a time (the hand-over thread);
 * {@link #withdraw} for any owner thread; {@link #enter}/{@link #exit} for any holder thread.
 * {@link #close()} is idempotent and must follow the last use.
 */
public final class AccessTable implements AutoCloseable {

    /** Concurrent buffers the table can serve; more are refused at registration. */
    public static final int SLOTS = 1 << 16;
    /** Copies one holder process has in flight at once. */
    public static final int ROWS = 1024;

    private static final System.Logger LOG = System.getLogger(AccessTable.class.getName());
    private static final long MAGIC = 0x7264_6d61_346a_5348L;    // "rdma4jSH"
    private static final long HEADER = 64;
    /** Where the slots file's header keeps the dormant flag (owner-written; 1: holders must wake the owner). */
    private static final long DORMANT_FLAG = 24;
    /** Where a row keeps the count of copies it announced. */
    static final long ROW_ENTRIES = 24;
    /** Set in the generation of a buffer whose memory may go away without a release (see the class comment). */
    public static final long WATCHED = 1L << 62;
    /**
     * Set in the generation of a read-only registration: holders must not write it. The owner
     * writes it (holders map the slots read-only), and a holder's copy proceeds only while the
     * generation it was granted, this bit included, is the slot's: what the holder's token
     * claims does not matter.
     */
    public static final long READ_ONLY = 1L << 61;
    /** Bytes of one row: claimed, slot, generation, count of copies announced. */
    static final long ROW = 32;
    /**
     * Where the slots file keeps the owner's liveness word ({@link LivenessLock}): after the
     * slots, in the same page (so a view of an older, shorter file reads zeros: "cannot tell").
     */
    private static final long LIVENESS = HEADER + 8L * SLOTS;
    private static final long SLOTS_SIZE = LIVENESS + LivenessLock.SIZE;
    static final long ROWS_SIZE = ROW * ROWS;
    static final VarHandle LONG = JAVA_LONG.varHandle();

    private final Arena arena;
    private final MemorySegment slots;      // owner: writable; holder: read-only
    private final ParkedFd parkedSlots;     // owner only
    private final BitSet used;              // owner only: slots in use
    private final MemorySegment rows;       // holder only: its own rows
    private final MemorySegment liveness;   // the owner's liveness word, in the slots file
    private LivenessLock livenessLock;      // owner only: held while the table is open
    private final GrantedHolders holders = new GrantedHolders();    // owner: the holder processes granted buffers
    private long nextGeneration = 1;
    private boolean closed;

    private AccessTable(Arena arena, MemorySegment slots, ParkedFd parkedSlots, BitSet used, MemorySegment rows) {
        this.arena = arena;
        this.slots = slots;
        this.parkedSlots = parkedSlots;
        this.used = used;
        this.rows = rows;
        this.liveness = slots.asSlice(LIVENESS, LivenessLock.SIZE);
    }

    /**
     * Creates the owner's slots file and maps it.
     *
     * @return the table; the caller owns it and closes it after the last {@link #revoke}
     * @throws IOException if the memory file cannot be created, mapped, sealed or parked
     */
    public static AccessTable create() throws IOException {
        Arena arena = Arena.ofShared();
        AccessTable t = null;
        try {
            MemoryFile.Mapped file = MemoryFile.createPeerReadOnly("rdma4j-shm-access", SLOTS_SIZE, arena);
            t = new AccessTable(arena, file.segment(), file.parked(), new BitSet(SLOTS), null);
            t.slots.set(JAVA_LONG, 8, SLOTS);
            t.slots.set(JAVA_LONG, 16, ROWS);
            t.livenessLock = LivenessLock.hold(t.liveness, "rdma-shm-alive");
            if (!t.livenessLock.held()) {
                LOG.log(System.Logger.Level.DEBUG, "shm: no liveness word ({0}): holders poll this process''s pidfd "
                        + "after each copy", t.livenessLock.failure());
            }
            LONG.setVolatile(t.slots, 0L, MAGIC);
            return t;
        } catch (IOException | RuntimeException e) {
            if (t != null && t.livenessLock != null) {
                t.livenessLock.close();     // its thread holds a mutex in the mapping the arena unmaps
            }
            arena.close();
            throw e;
        }
    }

    /**
     * A holder's view, from the two descriptors the owner handed over with a first grant. The
     * descriptors stay the caller's, who closes them (the mappings keep the pages).
     *
     * @param slotsFd the owner's slots file (mapped read-only)
     * @param rowsFd  this holder's rows file
     * @return the holder's view; the caller closes it when done with the owner
     * @throws IOException if a file cannot be mapped or holds no table
     */
    public static AccessTable attach(int slotsFd, int rowsFd) throws IOException {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment slots = MemoryFile.mapReadOnly(slotsFd, SLOTS_SIZE, arena);
            if ((long) LONG.getVolatile(slots, 0L) != MAGIC || slots.get(JAVA_LONG, 8) != SLOTS
                    || slots.get(JAVA_LONG, 16) != ROWS) {
                throw new IOException("the owner's descriptor holds no rdma4j access table");
            }
            return new AccessTable(arena, slots, null, null, MemoryFile.map(rowsFd, ROWS_SIZE, arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The owner's parked slots file, which it hands to holders with their grants.
     *
     * @throws IllegalStateException on a holder's view
     */
    public ParkedFd parked() {
        requireOwner();
        return parkedSlots;
    }

    /**
     * Where this process mapped the slots; a holder's probe copy reads the table's header there.
     *
     * @return the mapping's address in this process
     */
    public long address() {
        return slots.address();
    }

    /**
     * Owner, on the hand-over thread: records that holder process {@code pid} is granted
     * {@code slot}, and returns that holder's rows file to hand over with the grant (made at its
     * first grant; made anew when the process that had it exited and its pid came back).
     *
     * @param pid  the holder, as {@code SO_PEERCRED} says
     * @param slot the buffer granted
     * @return the holder's parked rows file
     * @throws IOException when the holder stalled a release ({@link #revoke}: it gets nothing more),
     *                     or its file cannot be made
     */
    public ParkedFd grant(long pid, Slot slot) throws IOException {
        requireOwner();
        return holders.grant(pid, slot);
    }

    /**
     * Owner: as {@link #assign(boolean)} for a buffer that is not watched.
     *
     * @return the slot and its generation, or empty when all {@link #SLOTS} slots are in use
     */
    public Optional<Slot> assign() {
        return assign(false, false);
    }

    /**
     * Owner: as {@link #assign(boolean, boolean)} for a writable buffer.
     *
     * @param watched whether the buffer's memory may go away without a release
     * @return the slot and its generation, or empty when all {@link #SLOTS} slots are in use
     */
    public Optional<Slot> assign(boolean watched) {
        return assign(watched, false);
    }

    /**
     * Owner: gives a newly registered buffer a free slot and a generation never used before in
     * this table, and publishes it.
     *
     * @param watched  whether the buffer's memory may go away without a release: holders then wake
     *                 a dormant owner before they copy it ({@link #WATCHED})
     * @param readOnly whether the registration is read-only: holders refuse writes ({@link #READ_ONLY})
     * @return the slot and its generation, or empty when all {@link #SLOTS} slots are in use
     */
    public Optional<Slot> assign(boolean watched, boolean readOnly) {
        requireOwner();
        int slot = used.nextClearBit(0);
        if (slot >= SLOTS) {
            return Optional.empty();
        }
        used.set(slot);
        long generation = nextGeneration++ | (watched ? WATCHED : 0) | (readOnly ? READ_ONLY : 0);
        LONG.setVolatile(slots, slotOffset(slot), generation);
        return Optional.of(new Slot(slot, generation));
    }

    /**
     * Owner: ends access to {@code slot}: no copy starts after this call, and it returns once no
     * holder granted the buffer announces a copy of it any more (or that holder exited), or when
     * {@code maxWait} is over; a holder still announcing it then is marked stalled, and no later
     * revoke waits for it. The slot is then free for another buffer. Revoking a free slot does nothing.
     *
     * @param slot    what {@link #assign} returned
     * @param maxWait how long to wait for copies in flight; a live holder's copy takes at most
     *                one chunk's time
     * @return which holders still announced the buffer when this returned
     */
    public Revoked revoke(Slot slot, Duration maxWait) {
        requireOwner();
        long now = (long) LONG.getVolatile(slots, slotOffset(slot.index()));
        if (!used.get(slot.index()) || (now != slot.generation() && now != 0)) {
            return Revoked.QUIET;       // free, or another buffer's since
        }
        LONG.setVolatile(slots, slotOffset(slot.index()), 0L);      // 0 already when withdrawn
        Revoked revoked = holders.awaitQuiet(slot, maxWait);
        used.clear(slot.index());
        return revoked;
    }

    /**
     * What {@link #revoke} found.
     *
     * @param waitedOut holders (pids) whose rows still announced the buffer when the wait ran
     *                  out: each is stalled from now on
     * @param ignored   holders stalled by an earlier release whose rows announced it, not waited for
     */
    public record Revoked(List<Long> waitedOut, List<Long> ignored) {
        /** No copy in flight any more. */
        public static final Revoked QUIET = new Revoked(List.of(), List.of());

        /** Whether no holder announced the buffer any more when the revoke returned. */
        public boolean quiet() {
            return waitedOut.isEmpty() && ignored.isEmpty();
        }
    }

    /**
     * Owner: sets or clears the dormant flag: while it is set, holders wake the owner before they
     * copy a watched buffer ({@link #enter} answers {@link #DORMANT}).
     *
     * @param dormant true when the owner stops looking at its watched buffers
     */
    public void setDormant(boolean dormant) {
        requireOwner();
        LONG.setVolatile(slots, DORMANT_FLAG, dormant ? 1L : 0L);
    }

    /**
     * Whether the owner is dormant (see {@link #setDormant}).
     *
     * @return the flag, as the owner last set it
     */
    public boolean isDormant() {
        return (long) LONG.getVolatile(slots, DORMANT_FLAG) != 0;
    }

    /**
     * Owner: how many copies the holders granted anything announced so far, over all their rows
     * (a holder's rows count its {@link #enter}s). Unchanged between two calls: no holder began a
     * copy meanwhile.
     *
     * @return the sum, which only grows while the same holders stay
     */
    public long entries() {
        requireOwner();
        return holders.entries();
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
        return LONG.compareAndSet(slots, slotOffset(slot.index()), slot.generation(), 0L);
    }

    /**
     * Holder: announces a copy of {@code slot} and checks that the buffer is still published.
     * On success the caller copies, then calls {@link #exit} with the returned row exactly once.
     *
     * @param slot the buffer's slot and generation, as the owner sent them
     * @return the claimed row (&ge; 0); {@link #RELEASED} when the buffer was released (nothing
     *         claimed); {@link #DORMANT} when the buffer is watched and the owner dormant: wake it
     *         (ask for the buffer again), then enter again (nothing claimed); {@link #BUSY} when
     *         all {@link #ROWS} rows of this holder are taken
     */
    public int enter(Slot slot) {
        requireHolder();
        int start = (int) (Thread.currentThread().threadId() * 0x9E3779B1L >>> 20) & (ROWS - 1);
        for (int i = 0; i < ROWS; i++) {
            int row = (start + i) & (ROWS - 1);
            long base = ROW * row;
            if ((long) LONG.getVolatile(rows, base) == 0 && LONG.compareAndSet(rows, base, 0L, 1L)) {
                LONG.setVolatile(rows, base + 8, (long) slot.index());
                LONG.setVolatile(rows, base + 16, slot.generation());
                LONG.setVolatile(rows, base + ROW_ENTRIES, (long) LONG.getVolatile(rows, base + ROW_ENTRIES) + 1);
                if (!isCurrent(slot)) {
                    exit(row);
                    return RELEASED;
                }
                if (slot.watched() && isDormant()) {
                    exit(row);
                    return DORMANT;
                }
                return row;
            }
        }
        return BUSY;
    }

    /**
     * Whether {@code slot} still holds its generation (the buffer was not released). A holder may
     * check this between chunks of a long copy to stop early.
     *
     * @param slot the buffer's slot and generation
     * @return true while the buffer is published
     */
    public boolean isCurrent(Slot slot) {
        return (long) LONG.getVolatile(slots, slotOffset(slot.index())) == slot.generation();
    }

    /**
     * Holder: whether the owner's liveness word says the owner process has not exited, read
     * without a system call ({@link LivenessLock}): true while the owner's table is open and the
     * owner lives (the kernel marks the word when the owner dies, before its pid can be reused);
     * false when it cannot tell (the table closed, the owner died, or its C library keeps no
     * such lock): then ask the owner's pidfd. The owner writes the word: believe a true only
     * where a lying owner harms nobody but itself (a copy into its mapped memory file), never
     * before a copy by pid.
     *
     * @return true: the owner had not exited when the word was read; false: cannot tell
     */
    public boolean ownerAlive() {
        return LivenessLock.saysAlive(liveness);
    }

    /**
     * Holder: ends the copy announced by {@link #enter}.
     *
     * @param row what {@link #enter} returned
     */
    public void exit(int row) {
        long base = ROW * row;
        LONG.setVolatile(rows, base + 16, 0L);
        LONG.setVolatile(rows, base + 8, -1L);
        LONG.setVolatile(rows, base, 0L);
    }

    /** {@link #enter}'s answer when the buffer was released. */
    public static final int RELEASED = -1;
    /** {@link #enter}'s answer when no row is free. */
    public static final int BUSY = -2;
    /** {@link #enter}'s answer when the buffer is watched and the owner dormant: wake it first. */
    public static final int DORMANT = -3;

    private static long slotOffset(int slot) {
        return HEADER + 8L * slot;
    }

    private void requireOwner() {
        if (used == null) {
            throw new IllegalStateException("only the owner's table assigns, grants and revokes slots");
        }
    }

    private void requireHolder() {
        if (rows == null) {
            throw new IllegalStateException("only a holder's view announces copies");
        }
    }

    /**
     * Unmaps the table and, on the owner, closes its parked descriptors and every holder's rows
     * file. Idempotent. Holders that mapped the owner's files keep their own mappings of the pages.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        holders.close();
        if (livenessLock != null) {
            livenessLock.close();       // before the unmapping: its thread clears the word
        }
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
         * Whether the buffer's memory may go away without a release ({@link #WATCHED}).
         *
         * @return whether holders wake a dormant owner before they copy it
         */
        public boolean watched() {
            return (generation & WATCHED) != 0;
        }

        /**
         * Whether the owner registered the buffer read-only ({@link #READ_ONLY}).
         *
         * @return whether holders must refuse writes to it
         */
        public boolean readOnly() {
            return (generation & READ_ONLY) != 0;
        }

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
