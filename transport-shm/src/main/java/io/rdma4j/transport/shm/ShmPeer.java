package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.spi.TransportException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A holder's view of one owner process (one manager incarnation) on this host: its pid and
 * process descriptor, its hand-over socket, its access table (mapped here once the owner handed
 * it over with a first grant), and what the owner granted for each buffer, by buffer id, with the
 * buffer's memory file mapped here when it was handed one. Thread-safe; closed by the transport.
 */
final class ShmPeer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ShmPeer.class.getName());

    private final String incarnation;
    private final long pid;
    private final int pidfd;                // names the owner process itself, whatever its pid names later
    private final String refusal;           // "" when the owner lets this process cross-memory attach
    private final String socket;            // the owner's hand-over socket (abstract name)
    private final ConcurrentHashMap<Long, Attachment> attachments = new ConcurrentHashMap<>();
    /** Staging channels to this owner not in use; at most {@link #STAGING_CHANNELS} exist at once. */
    private final java.util.concurrent.ConcurrentLinkedQueue<StagingChannel> idleStaging =
            new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final java.util.concurrent.Semaphore stagingPermits = new java.util.concurrent.Semaphore(STAGING_CHANNELS);

    /** Most staging channels one holder keeps to one owner (each an owner thread and a staging file). */
    static final int STAGING_CHANNELS = 8;
    private volatile AccessTable table;     // null until the first grant; then the owner's, for good
    private boolean closed;                 // guarded by this
    private boolean tableClosed;            // guarded by this

    /**
     * @param pidfd   a process descriptor of the owner ({@code pidfd_open}), now owned by this peer:
     *                copies ask it whether the owner still lives
     * @param refusal "" when the owner lets same-user peers cross-memory attach to it; otherwise
     *                why not (its token said so): then only its memory files are reached, by mapping
     * @param socket  the owner's hand-over socket ({@link Handover#name})
     */
    ShmPeer(String incarnation, long pid, int pidfd, String refusal, String socket) {
        this.incarnation = incarnation;
        this.pid = pid;
        this.pidfd = pidfd;
        this.refusal = refusal;
        this.socket = socket;
    }

    /** Whether this process may copy the owner's memory with cross-memory attach. */
    boolean crossMemory() {
        return refusal.isEmpty();
    }

    /** Why not, or "". */
    String refusal() {
        return refusal;
    }

    /** The owner's hand-over socket. */
    String socket() {
        return socket;
    }

    /** The owner's process descriptor. */
    int pidfd() {
        return pidfd;
    }

    long pid() {
        return pid;
    }

    /**
     * The owner's access table.
     *
     * @throws IllegalStateException before the owner granted anything (no attachment exists yet)
     */
    AccessTable table() {
        AccessTable t = table;
        if (t == null) {
            throw new IllegalStateException("no access table of " + this + " yet");
        }
        return t;
    }

    /** What the owner granted for {@code bufferId}, to whichever key; null when it has not granted it yet. */
    Attachment attachment(long bufferId) {
        return attachments.get(bufferId);
    }

    /**
     * One grant as it arrived: the grant and the descriptors handed over with it (the owner's
     * slots file, this holder's rows file, then the buffer's memory file when it is one), owned by
     * whoever holds this.
     */
    record Granted(ShmProtocol.Grant grant, int[] fds) {
        void closeFds() {
            for (int fd : fds) {
                Libc.close(fd);
            }
        }
    }

    /**
     * Remembers what the owner granted for {@code bufferId} after it checked {@code accessKey}:
     * maps the access table (the first time) and the buffer's memory file (when one came), then
     * closes every descriptor of {@code granted}, whatever happens. When another thread
     * remembered the same buffer first, that attachment is kept: both were granted to the
     * buffer's one key.
     *
     * @param accessKey the key the owner checked; copied
     * @throws TransportException {@link TransportException.Kind#PROTOCOL} when the descriptors are
     *                            not what the grant says (or the table's does not map); {@link
     *                            TransportException.Kind#REMOTE_FAILURE} when the buffer's memory file cannot be mapped
     *                            and cross-memory attach is not permitted
     */
    Attachment remember(long bufferId, byte[] accessKey, Granted granted) {
        Attachment fresh;
        try {
            ShmProtocol.Grant grant = granted.grant();
            int[] fds = granted.fds();
            if (fds.length != (grant.memoryFile() ? 3 : 2)) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "shm: the grant of buffer " + bufferId
                        + " of " + this + " came with " + fds.length + " descriptors");
            }
            useTable(fds[0], fds[1]);
            fresh = new Attachment(grant, accessKey, grant.memoryFile() ? map(bufferId, fds[2], grant.size()) : null);
        } finally {
            granted.closeFds();
        }
        Attachment prior = attachments.putIfAbsent(bufferId, fresh);
        if (prior != null) {
            fresh.close();
            return prior;
        }
        return fresh;
    }

    /** Maps the owner's table from its handed-over descriptors (slots, this holder's rows), unless mapped already. */
    synchronized void useTable(int slotsFd, int rowsFd) {
        if (table != null) {
            return;
        }
        if (closed) {
            throw new IllegalStateException("peer closed");
        }
        try {
            table = AccessTable.attach(slotsFd, rowsFd);
        } catch (IOException e) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "shm: cannot map the access table "
                    + this + " handed over: " + e.getMessage(), e);
        }
    }

    /** Maps a buffer's handed-over memory file; null (logged at DEBUG) when that fails and system calls may copy instead. */
    private Mapping map(long bufferId, int fd, long size) {
        Arena arena = Arena.ofShared();
        try {
            return new Mapping(arena, MemoryFile.map(fd, size, arena));
        } catch (IOException | RuntimeException e) {
            arena.close();
            if (!crossMemory()) {
                throw new TransportException(TransportException.Kind.REMOTE_FAILURE, "shm: cannot map the memory file of buffer "
                        + bufferId + " of " + this + " (" + e.getMessage() + "), and the owner does not permit "
                        + "cross-memory attach (" + refusal + ")", e);
            }
            LOG.log(System.Logger.Level.DEBUG, "shm: cannot map the memory file of buffer " + bufferId + " of " + this
                    + ", copying with process_vm_readv instead", e);
            return null;
        }
    }
    /**
     * Drops what was granted for a buffer found released, unmapping its memory file here; a later
     * op asks the owner again and is refused. A copy still running on the mapping fails with
     * {@link IllegalStateException}, which the caller reports as the release.
     */
    void forget(long bufferId) {
        Attachment a = attachments.remove(bufferId);
        if (a != null) {
            a.close();
        }
    }

    /**
     * A staging channel to this owner for one thread's op: an idle one, or a new one while fewer
     * than {@link #STAGING_CHANNELS} exist (else waits for one, until the deadline). Give it back
     * with {@link #giveBackStaging}.
     *
     * @throws TransportException {@link TransportException.Kind#TIMEOUT} when none came by the
     *                            deadline; what {@link StagingChannel#open} throws
     */
    StagingChannel borrowStaging(io.rdma4j.spi.Deadline deadline) {
        try {
            if (!stagingPermits.tryAcquire(Math.max(0, deadline.remainingNanos()), java.util.concurrent.TimeUnit.NANOSECONDS)) {
                throw new TransportException(TransportException.Kind.TIMEOUT, "shm: no staging channel to " + this
                        + " came free by the deadline");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException(TransportException.Kind.INTERNAL, "shm: interrupted waiting for a staging channel", e);
        }
        StagingChannel c = idleStaging.poll();
        if (c != null) {
            return c;
        }
        try {
            return StagingChannel.open(this, deadline.remainingNanos());
        } catch (RuntimeException e) {
            stagingPermits.release();
            throw e;
        }
    }

    /** Ends a thread's use of {@code c}: kept for the next op unless it is broken or this peer closed. */
    void giveBackStaging(StagingChannel c) {
        if (c.broken()) {
            c.close();
        } else {
            idleStaging.offer(c);
            synchronized (this) {
                if (closed && idleStaging.remove(c)) {
                    c.close();
                }
            }
        }
        stagingPermits.release();
    }

    /** Unmaps the owner's table and every buffer mapping, closes idle staging channels. Idempotent; no op may use this peer afterwards. */
    @Override
    public void close() {
        attachments.values().forEach(Attachment::close);
        attachments.clear();
        synchronized (this) {
            closed = true;
        }
        for (StagingChannel c; (c = idleStaging.poll()) != null; ) {
            c.close();
        }
        synchronized (this) {
            if (tableClosed) {
                return;
            }
            tableClosed = true;
            if (table != null) {
                table.close();
            }
            Libc.close(pidfd);
        }
    }

    @Override
    public String toString() {
        return "owner pid " + pid + " (incarnation " + incarnation + ")";
    }

    /**
     * One granted buffer, the access key the owner granted it to, and its memory file's mapping
     * when it has one. A buffer has one key, so a token presenting any other one is forged: the
     * owner would refuse it, and {@link #grantedTo} lets the holder refuse it without asking.
     */
    final class Attachment implements AutoCloseable {
        private final ShmProtocol.Grant grant;
        private final byte[] accessKey;
        private Arena arena;                       // guarded by this; null when nothing is mapped
        private volatile MemorySegment mapped;     // the buffer mapped here, or null

        Attachment(ShmProtocol.Grant grant, byte[] accessKey, Mapping mapping) {
            this.grant = grant;
            this.accessKey = accessKey.clone();
            if (mapping != null) {
                this.arena = mapping.arena();
                this.mapped = mapping.segment();
            }
        }

        ShmProtocol.Grant grant() {
            return grant;
        }

        /**
         * Whether the owner granted this buffer to {@code key}: compared in constant time, as the
         * owner compares it.
         */
        boolean grantedTo(byte[] key) {
            return java.security.MessageDigest.isEqual(accessKey, key);
        }

        /**
         * The buffer mapped into this process, or null when it has no memory file, mapping it
         * failed (then copies use cross-memory attach), or it was unmapped since.
         */
        MemorySegment mapping() {
            return mapped;
        }

        @Override
        public synchronized void close() {
            mapped = null;
            if (arena != null) {
                arena.close();
                arena = null;
            }
        }
    }

    /** A mapping and the arena that unmaps it. */
    private record Mapping(Arena arena, MemorySegment segment) {
    }
}
