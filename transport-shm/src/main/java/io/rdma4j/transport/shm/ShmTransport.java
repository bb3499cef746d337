package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.LocalBuffer;
import io.rdma4j.spi.Registered;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The same-host transport opened for one manager: as an owner it publishes its registrations in
 * an {@link AccessTable} and answers holders' ATTACH requests on its hand-over socket
 * ({@link Handover}), handing the memory files of its {@code allocate()}d buffers only to holders
 * that showed the key; as a holder it maps those, and copies other processes' other memory with
 * cross-memory attach where the kernel allows it ({@link ShmHolder}).
 *
 * <p><b>Threading.</b> {@link #register}/{@link #release} run on the manager's registration
 * thread; hand-over requests on the hand-over thread; {@link #submit} runs its ops
 * on a virtual thread, {@link #submitAndWait} on the caller's.
 *
 * <p><b>Arenas closed without release.</b> A caller may close the arena of a segment it registered
 * without releasing it first. TCP finds out at the next request (the owner pins the buffer);
 * here holders copy without asking, so while holders copy the owner looks at such segments'
 * arenas every {@value ArenaWatch#WATCH_MILLIS} ms and withdraws a closed one from the access
 * table; a holder's op then fails with the owner's word for it, as over TCP. Once holders stop
 * copying the owner stops looking (dormant, {@link ArenaWatch}: an idle owner does not wake for
 * it), and the next holder about to copy such a segment wakes it first, which looks at once
 * ({@link AccessTable}). What is promised: ops that start {@value ArenaWatch#WATCH_MILLIS} ms or
 * more after the close (and a watchdog tick) are refused; so is the first op after the owner went
 * dormant, whenever the close came. What is not: an op in that window may still copy the
 * segment's memory, which the owner's allocator may have reused meanwhile (memory unmapped by the
 * close fails such a copy at once). Only releasing before closing avoids that window, on any
 * transport that copies without the owner's help. Memory from {@code allocate()} is closed by
 * the manager only after release, and is not watched.
 *
 * <p><b>Permission.</b> Nothing the kernel protects is loosened unless the user opted in with
 * {@link ShmSettings#ALLOW_ANY_PTRACER} ({@link AnyPtracer}). Where same-user peers may not
 * cross-memory attach to this process (Yama's {@code ptrace_scope} 1 without the opt-in, 2),
 * tokens say so: holders then map this owner's {@code allocate()}d buffers (memory files) and
 * reach its other registered memory through its staging copy: on request, a staging file shared
 * with that holder and a {@link StagingServer} thread that copies between it and the buffer after
 * checking each request as a TCP request is checked ({@link StagingServers}). The owner grants
 * nothing else.
 *
 * <p><b>Memory files.</b> A buffer is handed over as a memory file only when it is one whole
 * (what {@code allocate()} registers): a registration of part of one is other memory, since the
 * file would give its holder the rest too. The descriptors stay parked (never in this process's
 * {@code /proc/<pid>/fd}, but for the moments of creating and handing one over).
 *
 * <p><b>Memory.</b> Registered segments stay the manager's or the caller's. The access table
 * (a memory file) and the pooled iovecs are this transport's, freed by {@link #close()}.
 */
final class ShmTransport implements Transport {

    private static final System.Logger LOG = System.getLogger(ShmTransport.class.getName());

    private final TransportContext context;
    private final AccessTable table;
    private final byte[] fileContext;          // the token context of buffers in a memory file
    private final byte[] otherContext;         // ... of other memory
    private final String refusal;
    private final boolean appliedPtracer;      // this transport holds one AnyPtracer.apply()
    private final Duration releaseWait;
    private final ShmHolder holder;
    private final Handover.Server handover;
    private final ConcurrentHashMap<Long, Published> published = new ConcurrentHashMap<>();
    private final ExecutorService workers = Executors.newThreadPerTaskExecutor(
            Thread.ofVirtual().name("rdma-shm-op-", 0).factory());
    private volatile boolean closed;

    /** Largest batch {@link #submit} copies on the caller's thread. */
    static final long INLINE_MAX_BYTES = 64 * 1024;

    /** Memory files this transport allocated, by mapping address. */
    private final ConcurrentHashMap<Long, MemoryFile.Mapped> files = new ConcurrentHashMap<>();

    /**
     * One registration as holders reach it.
     *
     * @param file the memory file that is exactly the segment, or null for other memory
     */
    record Published(AccessTable.Slot slot, MemorySegment segment, MemoryFile.Mapped file) {
    }

    /** Memory files whose own registration (the one {@code allocate} made them for) came: later ones are watched. */
    private final java.util.Set<MemoryFile.Mapped> claimedFiles = ConcurrentHashMap.newKeySet();
    /** The watch of registrations whose arena may close without release (caller memory, slices). */
    private final ArenaWatch arenaWatch;
    /** The staging channels this owner serves. */
    private final StagingServers staging;

    /**
     * Opens the owner's table and does the permission step.
     *
     * @throws IOException if the access table cannot be created
     */
    ShmTransport(TransportContext context, HostIdentity identity, PtraceScope scope) throws IOException {
        this.context = context;
        this.releaseWait = context.settings().get(ShmSettings.RELEASE_WAIT);
        this.table = AccessTable.create();
        this.arenaWatch = new ArenaWatch(table, context.watchdog(), () -> closed);
        this.staging = new StagingServers(context.registrations());
        AnyPtracer.Plan plan = AnyPtracer.plan(scope, context.settings().get(ShmSettings.ALLOW_ANY_PTRACER));
        String why = plan.setAnyPtracer() ? AnyPtracer.apply() : plan.refusal();
        this.appliedPtracer = plan.setAnyPtracer() && why.isEmpty();
        this.refusal = why;
        if (!refusal.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "shm: same-host peers may not attach to this process ({0}): they map "
                    + "its allocate()d buffers and reach its other registered memory through this process's staging copy", refusal);
        }
        long pid = ProcessHandle.current().pid();
        this.fileContext = new ShmContext(identity, pid, context.incarnation(), table.address(), true, refusal).toBytes();
        this.otherContext = new ShmContext(identity, pid, context.incarnation(), table.address(), false, refusal).toBytes();
        try {
            this.handover = new Handover.Server(Handover.name(java.util.HexFormat.of().formatHex(context.incarnation())),
                    this::serve);
        } catch (IOException | RuntimeException e) {
            table.close();
            if (appliedPtracer) {
                AnyPtracer.release();
            }
            throw e;
        }
        this.holder = new ShmHolder(identity, context.incarnation(), context.registrations(),
                (long) context.settings().get(ShmSettings.CHUNK_MIB) << 20, context.settings().get(ShmSettings.COPY_THREADS),
                context.settings().get(ShmSettings.FORCE_STAGING));
    }

    @Override
    public String name() {
        return ShmTransportProvider.NAME;
    }

    /**
     * Publishes {@code segment} in the access table. Any native segment qualifies; when the table
     * is full the answer is "not applicable" and other transports carry the buffer. A read-only
     * segment is published read-only ({@link AccessTable#READ_ONLY}, which holders check before
     * every write) and never handed over as a memory file (the holder would map it writable),
     * even when it is a read-only view of an {@code allocate()}d buffer: holders reach it as other
     * memory (cross-memory attach, or the staging copy, which refuses writes to it itself).
     */
    @Override
    public Registered register(long bufferId, MemorySegment segment) {
        MemoryFile.Mapped file = segment.isReadOnly() ? null : fileHolding(segment);     // a holder maps a file writable
        boolean allocation = isAllocation(file);
        java.util.Optional<AccessTable.Slot> slot = table.assign(!allocation, segment.isReadOnly());
        if (slot.isEmpty()) {
            if (allocation) {
                claimedFiles.remove(file);
            }
            return Registered.notApplicable("shm access table full (" + AccessTable.SLOTS + " buffers)");
        }
        Published p = new Published(slot.get(), segment, file);
        published.put(bufferId, p);
        if (!allocation) {
            arenaWatch.add(bufferId, p);       // looked at once a holder is granted it (serve)
        }
        return Registered.context(file != null ? fileContext : otherContext);
    }

    /**
     * Whether a registration of exactly memory file {@code f} (null: other memory) is the one
     * {@link #allocate} made the file for (the first of the whole file): the manager closes that
     * arena only after releasing it, so it needs no watching. Any other segment's arena may close
     * while it is registered.
     */
    private boolean isAllocation(MemoryFile.Mapped f) {
        return f != null && claimedFiles.add(f);
    }

    /** Whether the owner stopped looking at its watched registrations until a holder wakes it (for tests). */
    boolean isDormant() {
        return arenaWatch.isDormant();
    }

    /**
     * The memory file this transport allocated that is exactly {@code segment}, or null: part of
     * a file is not handed over as the file, which would give its holder the rest too.
     */
    private MemoryFile.Mapped fileHolding(MemorySegment segment) {
        MemoryFile.Mapped f = files.get(segment.address());
        return f != null && f.segment().byteSize() == segment.byteSize() ? f : null;
    }

    /**
     * Backs {@code RdmaManager.allocate()} with a memory file, so that same-host holders map the
     * buffer once and copy with plain memory copies instead of system calls. The mapping and the
     * descriptor live as long as {@code arena}.
     *
     * @throws IOException if the memory file cannot be created (e.g. too many open files)
     */
    @Override
    public MemorySegment allocate(long size, Arena arena) throws IOException {
        MemoryFile.Mapped mapped = MemoryFile.create("rdma4j-shm-buffer", size, arena,
                m -> {
                    files.remove(m.segment().address(), m);
                    claimedFiles.remove(m);
                });
        files.put(mapped.segment().address(), mapped);
        return mapped.segment();
    }

    /**
     * Ends holders' access: no copy starts after this begins, and it returns once the copies in
     * flight ended (at most {@link ShmSettings#RELEASE_WAIT}; a longer wait, which only a stopped
     * holder causes, is logged at WARNING).
     */
    @Override
    public void release(long bufferId) {
        Published p = published.remove(bufferId);
        arenaWatch.remove(bufferId);
        if (p != null) {
            AccessTable.Revoked revoked = table.revoke(p.slot(), releaseWait);
            if (!revoked.quiet()) {
                LOG.log(System.Logger.Level.WARNING, "shm: same-host holder(s) {0} still announced a copy of buffer {1} "
                        + "after {2}, and holder(s) {3}, stalled before, were not waited for; released anyway",
                        revoked.waitedOut(), bufferId, releaseWait, revoked.ignored());
            }
        }
    }

    /**
     * The owner's answer to a holder's ATTACH, on the hand-over thread, to a process of this user
     * (the server checked): incarnation, id and key first, then the grant, with the access table's
     * memory file and, for a memory file, the buffer's attached. A refusal carries no descriptor.
     */
    @SuppressWarnings("try")    // the pin is held, not used: it keeps the memory alive while the grant is built
    private Handover.Answer serve(UnixSockets.Credentials peer, byte[] payload) {
        if (payload.length == 1 && payload[0] == ShmProtocol.STAGE) {
            return staging.open(peer);
        }
        ShmProtocol.Attach attach;
        try {
            attach = ShmProtocol.readAttach(payload);
        } catch (IllegalArgumentException e) {
            return new Handover.Answer(ShmProtocol.refused(ErrorCode.BAD_REQUEST.wire(), e.getMessage()));
        }
        try {
            LocalBuffer buffer = context.registrations().lookup(attach.incarnation(), attach.bufferId(),
                    attach.accessKey(), 0, 1);
            arenaWatch.awaken();       // a holder granted, or waking the owner to copy: the watched arenas are looked at from now on
            try (LocalBuffer.Pin pin = buffer.pin()) {
                Published p = published.get(attach.bufferId());
                if (p == null) {
                    return new Handover.Answer(ShmProtocol.refused(ErrorCode.ACCESS_DENIED.wire(),
                            ShmProtocol.denied(attach.bufferId())));
                }
                MemoryFile.Mapped f = p.file();
                if (f == null && !refusal.isEmpty()) {      // its token told the holder so; it asked anyway
                    return new Handover.Answer(ShmProtocol.refused(ShmProtocol.NOT_PERMITTED & 0xff,
                            "owner does not permit cross-memory attach: " + refusal));
                }
                io.rdma4j.transport.shm.ffi.ParkedFd rows;
                try {
                    rows = table.grant(peer.pid(), p.slot());
                } catch (IOException e) {
                    return new Handover.Answer(ShmProtocol.refused(ErrorCode.FAILED.wire(), "shm: " + e.getMessage()));
                }
                byte[] grant = ShmProtocol.granted(new ShmProtocol.Grant(ProcessHandle.current().pid(), p.slot(),
                        p.segment().address(), p.segment().byteSize(), f != null));
                return new Handover.Answer(grant, descriptors(rows, f));
            }
        } catch (BufferAccessException e) {
            return new Handover.Answer(ShmProtocol.refused(ErrorCode.of(e.reason()).wire(), e.getMessage()));
        } catch (IOException e) {       // a parked descriptor closed under us: the memory went away meanwhile
            return new Handover.Answer(ShmProtocol.refused(ErrorCode.ACCESS_DENIED.wire(),
                    ShmProtocol.denied(attach.bufferId())));
        }
    }

    /**
     * New descriptors for the slots file, the holder's rows file and, when given, the buffer's
     * memory file; the caller closes them.
     */
    private int[] descriptors(io.rdma4j.transport.shm.ffi.ParkedFd rows, MemoryFile.Mapped file) throws IOException {
        int[] fds = new int[file == null ? 2 : 3];
        int taken = 0;
        try {
            fds[0] = table.parked().take();
            taken = 1;
            fds[1] = rows.take();
            taken = 2;
            if (file != null) {
                fds[2] = file.parked().take();
            }
            return fds;
        } catch (IOException | RuntimeException e) {
            for (int i = 0; i < taken; i++) {
                Libc.close(fds[i]);
            }
            throw e;
        }
    }

    /**
     * Decides once per token how ops reach its buffer.
     *
     * @throws TransportException {@link TransportException.Kind#PEER_UNREACHABLE} when this process
     *                            cannot attach to the owner (other host or user, refused by the
     *                            owner or the kernel): the reason is logged once per owner at INFO
     */
    @Override
    public Object decodeContext(RemoteBufferRef remote) {
        return holder.decode(remote);
    }

    /**
     * Runs the ops on a virtual thread; small ones ({@link #INLINE_MAX_BYTES} in all, each on a
     * buffer already attached) run right here instead: such a copy takes less time than handing
     * it to another thread, and returning a completed future is still returning quickly.
     */
    @Override
    public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
        if (!closed && holder.canRunInline(ops, INLINE_MAX_BYTES)) {
            try {
                holder.runAll(ops, deadline, Cancellation.NONE);
                return CompletableFuture.completedFuture(null);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        Cancellation cancellation = new Cancellation();
        CompletableFuture<Void> future = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                cancellation.cancel();          // returns once the piece in flight ended
                return super.cancel(mayInterruptIfRunning);
            }
        };
        if (closed) {
            future.completeExceptionally(new TransportException(TransportException.Kind.INTERNAL, "shm transport closed"));
            return future;
        }
        (staged(ops) ? stagingWorkers : workers).execute(() -> {
            try {
                holder.runAll(ops, deadline, cancellation);
                future.complete(null);
            } catch (Throwable t) {
                future.completeExceptionally(t);
            }
        });
        return future;
    }

    /** Whether any op goes through a staging channel, whose thread blocks in a native receive for the owner's answer. */
    private static boolean staged(List<TransportOp> ops) {
        for (int i = 0, n = ops.size(); i < n; i++) {
            if (ops.get(i).remoteContext() instanceof ShmRemote.Staged) {
                return true;
            }
        }
        return false;
    }

    /**
     * Threads for submitted ops that go through a staging channel: platform threads, since a
     * virtual one blocked in a native {@code recv} would hold one of the few carrier threads
     * until the owner answers. Idle ones end after a minute.
     */
    private final ExecutorService stagingWorkers = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("rdma-shm-staged-op-", 0).factory());

    @Override
    public void submitAndWait(List<TransportOp> ops, Deadline deadline) {
        if (closed) {
            throw new TransportException(TransportException.Kind.INTERNAL, "shm transport closed");
        }
        holder.runAll(ops, deadline, Cancellation.NONE);
    }

    /**
     * Stops the op threads, unmaps peers' tables, closes this owner's table and, when this
     * transport applied {@link ShmSettings#ALLOW_ANY_PTRACER}, ends that (the last one undoes the
     * prctl). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        staging.refuseNew();
        handover.close();
        workers.close();        // waits for ops in flight: they are bounded by their deadlines
        stagingWorkers.close();
        holder.close();
        staging.closeAll();      // holders' channels end (they see the end of the stream)
        arenaWatch.closeTable();      // a look at the watched arenas in progress ends first
        if (appliedPtracer) {
            AnyPtracer.release();
        }
    }
}
