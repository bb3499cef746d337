package io.rdma4j.shm;

import io.rdma4j.shm.ffi.Libc;
import io.rdma4j.shm.ffi.MemoryFile;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A holder's view of one owner process (one manager incarnation) on this host: its pid, its
 * access table mapped here, and what the owner granted for each buffer, by buffer id, with the
 * buffer's memory file mapped here when it has one. Thread-safe; closed by the transport.
 */
final class ShmPeer implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(ShmPeer.class.getName());

    private final String incarnation;
    private final long pid;
    private final AccessTable table;
    private final int pidfd;                // names the owner process itself, whatever its pid names later
    private final String refusal;           // "" when the owner lets this process cross-memory attach
    private final java.util.concurrent.atomic.AtomicBoolean routeLogged = new java.util.concurrent.atomic.AtomicBoolean();
    private final ConcurrentHashMap<Long, Attachment> attachments = new ConcurrentHashMap<>();

    /**
     * @param pidfd a process descriptor of the owner ({@code pidfd_open}), now owned by this peer:
     *              copies ask it whether the owner still lives
     * @param refusal "" when the owner lets same-user peers cross-memory attach to it; otherwise
     *                why not (its token said so): then only its memory files are reached, by mapping
     */
    ShmPeer(String incarnation, long pid, AccessTable table, int pidfd, String refusal) {
        this.incarnation = incarnation;
        this.pid = pid;
        this.table = table;
        this.pidfd = pidfd;
        this.refusal = refusal;
    }

    /** Whether this process may copy the owner's memory with cross-memory attach. */
    boolean crossMemory() {
        return refusal.isEmpty();
    }

    /** Why not, or "". */
    String refusal() {
        return refusal;
    }

    /** True the first time only: the route of the owner's non-file memory is logged once per peer. */
    boolean firstRouteLog() {
        return routeLogged.compareAndSet(false, true);
    }

    /** The owner's process descriptor. */
    int pidfd() {
        return pidfd;
    }

    long pid() {
        return pid;
    }

    AccessTable table() {
        return table;
    }

    /** What the owner granted for {@code bufferId}, to whichever key; null when it has not granted it yet. */
    Attachment attachment(long bufferId) {
        return attachments.get(bufferId);
    }

    /**
     * Remembers what the owner granted for {@code bufferId} after it checked {@code accessKey}.
     * When another thread remembered the same buffer first, that attachment is kept: both were
     * granted to the buffer's one key.
     *
     * @param accessKey the key the owner checked; copied
     */
    Attachment remember(long bufferId, byte[] accessKey, ShmProtocol.Grant grant) {
        Attachment fresh = new Attachment(grant, accessKey);
        Attachment prior = attachments.putIfAbsent(bufferId, fresh);
        return prior != null ? prior : fresh;
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

    /** Unmaps the owner's table and every buffer mapping. Idempotent; no op may use this peer afterwards. */
    @Override
    public void close() {
        attachments.values().forEach(Attachment::close);
        attachments.clear();
        table.close();
        if (closedPidfd.compareAndSet(false, true)) {
            Libc.close(pidfd);
        }
    }

    private final java.util.concurrent.atomic.AtomicBoolean closedPidfd = new java.util.concurrent.atomic.AtomicBoolean();

    @Override
    public String toString() {
        return "owner pid " + pid + " (incarnation " + incarnation + ")";
    }

    /**
     * One granted buffer and the access key the owner granted it to; its memory file is mapped on
     * first use. A buffer has one key, so a token presenting any other one is forged: the owner
     * would refuse it, and {@link #grantedTo} lets the holder refuse it without asking.
     */
    final class Attachment implements AutoCloseable {
        private final ShmProtocol.Grant grant;
        private final byte[] accessKey;
        private Arena arena;                       // guarded by this
        private volatile MemorySegment mapped;     // the buffer's range of the mapping, or null
        private boolean unmappable;                // guarded by this: mapping failed once, use system calls

        Attachment(ShmProtocol.Grant grant, byte[] accessKey) {
            this.grant = grant;
            this.accessKey = accessKey.clone();
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
         * The buffer mapped into this process, or null when it has no memory file, or mapping it
         * failed (then copies use cross-memory attach; logged once at DEBUG).
         */
        MemorySegment mapping() {
            MemorySegment m = mapped;
            if (m != null || grant.memFd() < 0) {
                return m;
            }
            synchronized (this) {
                if (mapped == null && !unmappable) {
                    Arena a = Arena.ofShared();
                    try {
                        MemorySegment file = MemoryFile.map(Path.of("/proc/" + pid + "/fd/" + grant.memFd()),
                                grant.fileSize(), a);
                        arena = a;
                        mapped = file.asSlice(grant.fileOffset(), grant.size());
                    } catch (IOException | RuntimeException e) {
                        a.close();
                        unmappable = true;
                        LOG.log(System.Logger.Level.DEBUG, "shm: cannot map the memory file of a buffer of "
                                + ShmPeer.this + ", copying with process_vm_readv instead", e);
                    }
                }
                return mapped;
            }
        }

        @Override
        public synchronized void close() {
            mapped = null;
            unmappable = true;
            if (arena != null) {
                arena.close();
                arena = null;
            }
        }
    }
}
