package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.internal.LocalMemorySweeper;
import io.rdma4j.internal.ResolvedSettings;
import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.internal.control.ControlClient;
import io.rdma4j.internal.control.ControlServer;
import io.rdma4j.internal.registration.RegistrationRing;
import io.rdma4j.internal.registration.RegistrationTable;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.TransportProvider;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Registers off-heap memory for remote access and moves bytes to and from remote buffers.
 *
 * <p>A manager discovers transports ({@link TransportProvider}) with {@link ServiceLoader}, orders
 * them by priority (verbs before TCP), opens every available one, and registers each segment
 * with all of them. {@link #register} hands back an {@link RdmaRemoteBuffer} token that any
 * process can use, through its own manager, to read or write the buffer
 * ({@link #read}, {@link #write}, {@link #newAction()}) and to release it ({@link #release(RdmaRemoteBuffer)}).
 *
 * <p><b>Parts.</b> This class is a facade. {@link ManagerStartup} discovers and opens the
 * transports, {@link Registrar} registers and releases on the registration thread,
 * {@link Dispatcher} routes and runs actions, {@link ManagerControl} answers the control
 * endpoint, {@link SharedManager} keeps the process-wide instance, {@link Segments} checks memory.
 *
 * <p><b>Threads.</b> Registrations and releases run in order on one thread, fed by a Disruptor
 * ring; callers never block on them. A control endpoint (virtual threads) serves remote
 * releases, readiness probes and transport handshakes. All methods are thread-safe.
 *
 * <p><b>Warning:</b> futures returned by {@link #register}, {@link #allocate} and
 * {@link #release} complete on the registration thread. Dependent stages added without an
 * {@code *Async} variant run there too and delay every other registration: keep them short.
 *
 * <pre>{@code
 * try (RdmaManager manager = RdmaManager.newBuilder().build();
 *      RdmaBuffer buffer = manager.allocate(1 << 20).join()) {
 *     byte[] token = buffer.remote().toBytes();           // send to a peer
 *     // on the peer: peerManager.read(RdmaRemoteBuffer.fromBytes(token), local, Duration.ofSeconds(5)).join();
 * }
 * }</pre>
 */
public final class RdmaManager implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RdmaManager.class.getName());
    private static final Duration DEFAULT_REMOTE_TIMEOUT = Duration.ofSeconds(30);

    private final ResolvedSettings settings;
    private final byte[] incarnation;
    private final RegistrationTable table;
    private final List<OpenTransport> transports;
    private final List<String> transportNames;
    private final ManagerControl control;
    private final ControlServer controlServer;
    private final ControlClient controlClient;
    private final Endpoint controlEndpoint;
    private final WatchdogThread watchdog;
    private final RegistrationRing ring;
    private final Dispatcher dispatcher;
    private final ManagerStats stats;
    private final List<TransportInfo> discovered;
    private final LocalMemorySweeper sweeper;
    private final AtomicBoolean closed = new AtomicBoolean();

    /** The started parts of a manager; assigning them starts nothing and publishes nothing. */
    record Parts(ResolvedSettings settings, byte[] incarnation, RegistrationTable table,
                         List<OpenTransport> transports, ManagerControl control, ControlServer controlServer,
                         ControlClient controlClient, Endpoint controlEndpoint, WatchdogThread watchdog,
                         RegistrationRing ring, Dispatcher dispatcher, ManagerStats stats, List<TransportInfo> discovered) {
    }

    RdmaManager(Parts p) {
        this.settings = p.settings;
        this.incarnation = p.incarnation;
        this.table = p.table;
        this.transports = p.transports;
        this.transportNames = p.transports.stream().map(OpenTransport::name).toList();
        this.control = p.control;
        this.controlServer = p.controlServer;
        this.controlClient = p.controlClient;
        this.controlEndpoint = p.controlEndpoint;
        this.watchdog = p.watchdog;
        this.ring = p.ring;
        this.dispatcher = p.dispatcher;
        this.stats = p.stats;
        this.discovered = p.discovered;
        this.sweeper = new LocalMemorySweeper(p.transports.stream().map(OpenTransport::local).filter(Objects::nonNull).toList(),
                p.watchdog);
    }

    // ------------------------------------------------------------------ construction

    /**
     * A builder of explicit managers (tests, processes that want several).
     *
     * @return a new builder with nothing set
     */
    public static RdmaManagerBuilder newBuilder() {
        return new RdmaManagerBuilder();
    }

    /**
     * The process-wide manager, created with default settings (system properties and environment)
     * on first use and closed at JVM shutdown. A closed shared manager is replaced on the next call.
     *
     * @return the shared manager, started
     * @throws TransportUnavailableException if it cannot start; the same failure is reported on every
     *                                     later call, and the control endpoint stays up answering
     *                                     readiness probes with it
     * @throws IllegalArgumentException    if a setting is invalid
     */
    public static RdmaManager shared() {
        return SharedManager.get();
    }

    // ------------------------------------------------------------------ registration

    /**
     * Registers {@code segment} with every transport and returns its token. Returns at once; the
     * work runs on the registration thread.
     *
     * <p><b>Read-only:</b> a read-only segment ({@link MemorySegment#isReadOnly()}: a read-only
     * file mapping, {@code asReadOnly()}) is registered read-only: the token says so
     * ({@link RdmaRemoteBuffer#isReadOnly()}), peers may read it, and every remote write is refused
     * per op, by the holder and by the owner's side (a {@link RemoteAccessException}; no byte changes).
     *
     * <p><b>Ownership:</b> the caller keeps owning the memory and must keep its arena open until
     * the buffer is released ({@link #release(long)}); closing it earlier makes later remote
     * accesses fail cleanly (never a crash), but a verbs NIC may still have it registered.
     * Prefer {@link #allocate(long)}.
     *
     * @param segment native memory that every thread may access, writable or read-only; the caller
     *                keeps owning it and must keep it alive until the buffer is released
     * @return the token; fails with {@link RegistrationException} (a transport refused; the others
     *         were rolled back), {@link ManagerClosedException}, or {@link RdmaTimeoutException} when
     *         the registration ring stayed full for {@code rdma.registration.queueTimeout} (while it
     *         is full, this call waits for room)
     * @throws IllegalArgumentException if the segment is on the heap, empty, confined to one thread
     *                                  (transports need shared access) or its arena is closed
     */
    public CompletableFuture<RdmaRemoteBuffer> register(MemorySegment segment) {
        Segments.checkRegistrable(segment);
        return submitRegistration(segment, null);
    }

    /**
     * Allocates {@code size} bytes of page-aligned, zeroed native memory owned by the manager and
     * registers it, writable. The transports are asked first, in priority order, whether one
     * provides the memory (a same-host transport backs it with memory a peer process can map);
     * otherwise it is plain native memory.
     *
     * @param size the length in bytes, at least 1
     * @return the buffer; fails as {@link #register} does, or with {@link OutOfMemoryError} as cause
     *         when the memory cannot be allocated
     * @throws IllegalArgumentException if {@code size < 1}
     */
    public CompletableFuture<RdmaBuffer> allocate(long size) {
        if (size < 1) {
            throw new IllegalArgumentException("buffer size must be positive: " + size);
        }
        Arena arena = Arena.ofShared();
        MemorySegment segment;
        try {
            segment = Registrar.allocate(transports, arena, size);
        } catch (Throwable e) {
            arena.close();
            return CompletableFuture.failedFuture(e instanceof RdmaException re ? re
                    : new RdmaException("cannot allocate " + size + " bytes of native memory: " + e.getMessage(), e));
        }
        return submitRegistration(segment, arena).thenApply(token -> new RdmaBuffer(this, segment, token));
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private CompletableFuture<RdmaRemoteBuffer> submitRegistration(MemorySegment segment, Arena owned) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        try {
            ring.register(segment, owned, result);
        } catch (IllegalStateException closedRing) {
            Registrar.closeQuietly(owned);
            return CompletableFuture.failedFuture(closedError());
        } catch (RdmaException full) { // the ring stayed full
            Registrar.closeQuietly(owned);
            return CompletableFuture.failedFuture(full);
        }
        return (CompletableFuture) result;
    }

    /**
     * Releases buffer {@code bufferId} of this manager on every transport. Idempotent: unknown and
     * already released ids succeed. After the future completes no remote access to the buffer
     * succeeds; memory the manager allocated is freed once in-flight accesses finish, and
     * caller-owned memory may be freed by its owner.
     *
     * @param bufferId the id of a buffer this manager registered ({@link RdmaRemoteBuffer#id()})
     * @return completes when every transport released it; fails with {@link RdmaReleaseException}
     *         listing each transport that failed (the buffer is released anyway), or with
     *         {@link RdmaTimeoutException} when the ring stayed full for
     *         {@code rdma.registration.queueTimeout} (nothing was done; while it is full, this call
     *         waits for room)
     */
    public CompletableFuture<Void> release(long bufferId) {
        if (closed.get()) {
            return CompletableFuture.completedFuture(null); // close() released everything
        }
        CompletableFuture<Object> result = new CompletableFuture<>();
        try {
            ring.release(bufferId, result);
        } catch (IllegalStateException closedRing) {
            return CompletableFuture.completedFuture(null);
        } catch (RdmaException full) { // the ring stayed full
            return CompletableFuture.failedFuture(full);
        }
        return result.thenApply(x -> null);
    }

    /**
     * Releases the buffer a token names: locally when this manager owns it, otherwise by asking
     * its owner over the control endpoint, within 30 seconds. Idempotent for the owner; a remote
     * owner refuses a second release like any request for a buffer it no longer has.
     *
     * @param buffer the token of the buffer, whether this manager or a peer owns it
     * @return fails with {@link RemoteAccessException} when the owner refuses (wrong key, unknown or
     *         already released buffer: one refusal for all three), {@link StaleTokenException} when
     *         the owner restarted,
     *         {@link PeerUnreachableException} or {@link RdmaTimeoutException} when the owner does
     *         not answer, {@link RdmaReleaseException} when the owner's transports failed
     */
    public CompletableFuture<Void> release(RdmaRemoteBuffer buffer) {
        return release(buffer, DEFAULT_REMOTE_TIMEOUT);
    }

    /**
     * {@link #release(RdmaRemoteBuffer)} with an explicit deadline for the remote case.
     *
     * @param buffer  the token of the buffer, whether this manager or a peer owns it
     * @param timeout how long a remote owner has to answer
     * @return fails as {@link #release(RdmaRemoteBuffer)} does
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public CompletableFuture<Void> release(RdmaRemoteBuffer buffer, Duration timeout) {
        Objects.requireNonNull(buffer, "buffer");
        Deadline deadline = Deadline.after(timeout);
        if (buffer.isOwnedBy(incarnation)) {
            var r = table.get(buffer.id());
            if (r == null) {
                return CompletableFuture.completedFuture(null); // already released: idempotent for the owner
            }
            try {
                table.lookup(incarnation, buffer.id(), buffer.accessKey(), 0, 1);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(Errors.toPublic(null, e));
            }
            return release(buffer.id());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedError());
        }
        return controlClient.release(buffer.owner(), buffer.incarnationBytes(), buffer.id(), buffer.accessKey(), deadline)
                .handle((ok, failure) -> {
                    if (failure != null) {
                        throw Errors.toPublic(null, failure);
                    }
                    return null;
                });
    }

    // ------------------------------------------------------------------ transfers

    /**
     * A new, empty batch of transfers against this manager's transports.
     *
     * @return the new action
     */
    public RdmaAction newAction() {
        return new RdmaAction(this);
    }

    /**
     * Reads the whole remote buffer into the first {@code remote.size()} bytes of {@code local}.
     *
     * @param remote  the token of the buffer to read
     * @param local   the destination: native, shared, writable memory of at least
     *                {@code remote.size()} bytes; the caller keeps owning it and must keep it alive
     *                until the future completes
     * @param timeout the time the read may take, counted from this call
     * @return fails with {@link RdmaSubmitException} (whose cause says what went wrong:
     *         {@link RdmaTimeoutException}, {@link RemoteAccessException}, ...) or
     *         {@link NoCompatibleTransportException}
     * @throws IllegalArgumentException if {@code local} is smaller than the remote buffer, on the heap or closed
     */
    public CompletableFuture<Void> read(RdmaRemoteBuffer remote, MemorySegment local, Duration timeout) {
        return newAction().readInto(remote, local).submit(timeout);
    }

    /**
     * Writes the whole of {@code local} into the first {@code local.byteSize()} bytes of the remote buffer.
     *
     * @param remote  the token of the buffer to write
     * @param local   the source: native, shared memory of 1 to {@code remote.size()} bytes; the
     *                caller keeps owning it and must keep it alive, and unchanged, until the future
     *                completes
     * @param timeout the time the write may take, counted from this call
     * @return fails as {@link #read} does
     * @throws IllegalArgumentException if the remote buffer is read-only, or {@code local} larger than it, on the heap or closed
     */
    public CompletableFuture<Void> write(RdmaRemoteBuffer remote, MemorySegment local, Duration timeout) {
        return newAction().writeFrom(remote, local).submit(timeout);
    }

    CompletableFuture<RdmaResult> submit(RdmaAction action, List<RdmaAction.Op> ops, Set<String> required,
                                         Duration timeout, boolean wantResult) {
        if (closed.get() && !ops.isEmpty()) {
            return CompletableFuture.failedFuture(closedError());
        }
        return dispatcher.submit(action, ops, required, timeout, wantResult);
    }

    RdmaResult submitAndWait(RdmaAction action, List<RdmaAction.Op> ops, Set<String> required, Duration timeout) {
        if (closed.get() && !ops.isEmpty()) {
            throw closedError();
        }
        return dispatcher.submitAndWait(action, ops, required, timeout);
    }

    /**
     * Asks each peer manager, at its control endpoint, whether it finished starting; all share one
     * deadline. Never fails: a peer that does not answer in time is {@link PeerReadiness.State#UNREACHABLE}.
     *
     * @param peers   the control endpoints to ask; one asked twice is probed once
     * @param timeout the time all probes together may take, counted from this call
     * @return one answer per distinct peer, in the order given
     */
    public CompletableFuture<Map<Endpoint, PeerReadiness>> probeReadiness(Collection<Endpoint> peers, Duration timeout) {
        return ManagerControl.probeReadiness(controlClient, peers, Deadline.after(timeout));
    }

    // ------------------------------------------------------------------ introspection

    /**
     * Names of the transports this manager runs, fastest first.
     *
     * @return an immutable list of transport names
     */
    public List<String> transports() {
        return transportNames;
    }

    /**
     * Every transport this manager discovered, fastest first, with what became of it: opened, not
     * available here (and why), or failed to open (and why).
     *
     * @return an immutable list, fixed when the manager started
     */
    public List<TransportInfo> transportInfo() {
        return discovered;
    }

    /**
     * A snapshot of this manager's counters: ops, bytes, errors and latency per transport and op
     * type, registrations, and how full the registration ring is. Cheap to keep: counting takes no
     * lock on the transfer path.
     *
     * @return a new snapshot; works on a closed manager too
     */
    public RdmaStats stats() {
        return stats.snapshot(table.size(), ring.pending(), ring.capacity());
    }

    /**
     * This manager's control endpoint, as peers reach it.
     *
     * @return the advertised control endpoint, the one put into tokens
     */
    public Endpoint controlEndpoint() {
        return controlEndpoint;
    }

    /**
     * This manager's incarnation: 32 hex digits, new for every manager.
     *
     * @return the incarnation, in lower-case hex
     */
    public String incarnation() {
        return HexFormat.of().formatHex(incarnation);
    }

    /**
     * The validated value of a setting (manager or transport).
     *
     * @param <T>     the setting's type
     * @param setting a setting of {@link RdmaSettings} or of one of the providers this manager found
     * @return the value in effect, never {@code null}
     * @throws IllegalArgumentException if neither the manager nor any provider declared {@code setting}
     */
    public <T> T setting(Setting<T> setting) {
        return settings.get(setting);
    }

    /**
     * How many buffers are registered now.
     *
     * @return the number of buffers registered and not yet released
     */
    public int registeredBufferCount() {
        return table.size();
    }

    /** Drops prepared local memory of closed arenas now, as the scheduled sweep does, and schedules the next (tests). */
    void sweepLocalMemory() {
        sweeper.sweepNow();
    }

    /** What schedules the sweeps of prepared local memory (tests). */
    LocalMemorySweeper localMemorySweeper() {
        return sweeper;
    }

    Thread registrationThread() {
        return ring.consumerThread();
    }

    /**
     * Whether {@link #close()} was called.
     *
     * @return {@code true} once {@code close()} was called, even before it finished
     */
    public boolean isClosed() {
        return closed.get();
    }

    // ------------------------------------------------------------------ close

    /**
     * Releases every registration, closes every transport in reverse priority order, frees the
     * memory the manager allocated (after in-flight remote accesses finish) and stops the
     * registration thread and the control endpoint. Requests queued before the call run first
     * (a queued registration completes, then is released); later ones fail with
     * {@link ManagerClosedException}. Transports fail their in-flight transfers. Blocks until all
     * that is done, except when called from a continuation running on the registration thread,
     * where it finishes on another thread. Idempotent; errors are logged, never thrown.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        control.failed("manager closed");
        sweeper.close();
        if (ring.isConsumerThread()) {
            // Called from a continuation of one of our futures: finish on another thread.
            Thread.ofPlatform().name("rdma4j-close").daemon().start(this::finishClose);
        } else {
            finishClose();
        }
    }

    private void finishClose() {
        try {
            ring.close(); // releases everything, then closes the transports
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "closing the registration ring failed", e);
        }
        controlClient.close();
        controlServer.close();
        watchdog.close();
        LOG.log(Level.DEBUG, () -> "rdma4j manager " + incarnation() + " closed");
    }

    private ManagerClosedException closedError() {
        return closedError(controlEndpoint);
    }

    static ManagerClosedException closedError(Endpoint endpoint) {
        return new ManagerClosedException("RDMA manager " + endpoint + " is closed");
    }

    @Override
    public String toString() {
        return "RdmaManager[" + controlEndpoint + ", incarnation=" + incarnation() + ", transports=" + transportNames
                + (closed.get() ? ", closed" : "") + "]";
    }
}
