package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.internal.Registration;
import io.rdma4j.internal.RegistrationTable;
import io.rdma4j.internal.ResolvedSettings;
import io.rdma4j.internal.control.ControlClient;
import io.rdma4j.internal.control.ControlServer;
import io.rdma4j.internal.control.ControlService;
import io.rdma4j.internal.ring.RegistrationRing;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Backend;
import io.rdma4j.spi.BackendContext;
import io.rdma4j.spi.BackendOp;
import io.rdma4j.spi.BackendProvider;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.ControlChannel;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Watchdog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Registers off-heap memory for remote access and moves bytes to and from remote buffers.
 *
 * <p>A manager discovers transports ({@link BackendProvider}) with {@link ServiceLoader}, orders
 * them by priority (verbs before TCP), opens every available one, and registers each segment
 * with all of them. {@link #register} hands back an {@link RdmaRemoteBuffer} token that any
 * process can use, through its own manager, to read or write the buffer
 * ({@link #read}, {@link #write}, {@link #newAction()}) and to release it ({@link #release(RdmaRemoteBuffer)}).
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
    private static final Pattern PROVIDER_NAME = Pattern.compile("[a-z0-9_-]{1,32}");
    private static final Duration DEFAULT_REMOTE_TIMEOUT = Duration.ofSeconds(30);
    /** Extra time a transport gets past the deadline to report its own timeout before the manager reports one. */
    private static final long DEADLINE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private static final Object SHARED_LOCK = new Object();
    private static RdmaManager shared;
    private static RuntimeException sharedFailure;
    /** Control endpoints of managers that failed to start and still answer probes with the failure. */
    private static final List<ControlServer> LINGERING = new java.util.concurrent.CopyOnWriteArrayList<>();

    private final ResolvedSettings settings;
    private final byte[] incarnation;
    private final SecureRandom random = new SecureRandom();
    private final RegistrationTable table = new RegistrationTable();
    private final Map<String, ControlChannel.Handler> controlHandlers = new ConcurrentHashMap<>();
    private final List<Opened> backends;
    private final List<String> backendNames;
    private final ControlServer controlServer;
    private final ControlClient controlClient;
    private final Endpoint controlEndpoint;
    private final RegistrationRing ring;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Watchdog watchdog;
    private volatile PeerReadiness.State state = PeerReadiness.State.STARTING;
    private volatile String startError = "";

    private record Opened(BackendProvider provider, Backend backend) {
        String name() {
            return provider.name();
        }
    }

    private RdmaManager(Builder builder) {
        List<BackendProvider> providers = sortedProviders(builder.providers != null ? builder.providers : discover());
        List<Setting<?>> declared = new ArrayList<>(RdmaSettings.all());
        for (BackendProvider p : providers) {
            declared.addAll(p.settings());
        }
        this.settings = ResolvedSettings.resolve(declared, builder.values, builder.properties, builder.environment);
        this.incarnation = new byte[RdmaRemoteBuffer.KEY_BYTES];
        random.nextBytes(incarnation);

        String bindHost = settings.get(RdmaSettings.BIND_HOST);
        String advertised = advertisedHost(bindHost, settings.get(RdmaSettings.ADVERTISED_HOST));
        try {
            this.controlServer = ControlServer.start(bindHost, settings.get(RdmaSettings.CONTROL_PORT), new Service());
        } catch (IOException e) {
            throw new RdmaException("cannot open the control endpoint on " + bindHost + ":"
                    + settings.get(RdmaSettings.CONTROL_PORT) + " (rdma.bindHost / rdma.controlPort): " + e.getMessage(), e);
        }
        this.controlEndpoint = new Endpoint(advertised, controlServer.localAddress().getPort());
        this.controlClient = new ControlClient(controlEndpoint);

        List<Opened> opened = new ArrayList<>();
        try {
            openBackends(providers, bindHost, advertised, opened);
        } catch (RuntimeException e) {
            startError = e.getMessage();
            state = PeerReadiness.State.FAILED;
            controlClient.close();
            if (builder.keepEndpointOnFailure) {
                LINGERING.add(controlServer);
            } else {
                controlServer.close();
            }
            throw e;
        }
        this.backends = List.copyOf(opened);
        this.backendNames = backends.stream().map(Opened::name).toList();
        RegistrationRing startedRing = null;
        try {
            startedRing = new RegistrationRing(settings.get(RdmaSettings.REGISTRATION_RING_SIZE),
                    settings.get(RdmaSettings.REGISTRATION_QUEUE_TIMEOUT), "rdma4j-registration-" + controlEndpoint.port(), new Worker());
            this.watchdog = new Watchdog("rdma4j-deadlines-" + controlEndpoint.port());
        } catch (RuntimeException | Error e) { // threads could not start: undo what did
            if (startedRing != null) {
                startedRing.close(); // its worker closes the transports
            } else {
                for (int i = opened.size() - 1; i >= 0; i--) {
                    opened.get(i).backend().close();
                }
            }
            controlClient.close();
            controlServer.close();
            throw e;
        }
        this.ring = startedRing;
        state = PeerReadiness.State.READY;
        LOG.log(Level.DEBUG, () -> "rdma4j manager " + incarnation() + " ready on " + controlEndpoint
                + " with transports " + backendNames);
    }

    private void openBackends(List<BackendProvider> providers, String bindHost, String advertised, List<Opened> opened) {
        Map<String, String> unavailable = new LinkedHashMap<>();
        Map<String, Throwable> failed = new LinkedHashMap<>();
        for (BackendProvider p : providers) {
            Availability a;
            try {
                a = p.availability(settings);
            } catch (RuntimeException | LinkageError e) {
                a = Availability.unavailable("availability check failed: " + e);
            }
            if (!a.isAvailable()) {
                String reason = a.reason();
                unavailable.put(p.name(), reason);
                LOG.log(Level.DEBUG, () -> "transport " + p.name() + " not available: " + reason);
                continue;
            }
            try {
                Backend b = Objects.requireNonNull(p.open(new Context(p.name(), bindHost, advertised)),
                        p.name() + " provider returned no backend");
                opened.add(new Opened(p, b));
            } catch (Throwable e) {
                controlHandlers.remove(p.name());
                failed.put(p.name(), e);
                LOG.log(Level.WARNING, "transport " + p.name() + " failed to open; skipping it", e);
            }
        }
        if (!opened.isEmpty()) {
            if (!failed.isEmpty()) {
                LOG.log(Level.WARNING, "some RDMA backends failed to initialize: " + describe(failed));
            }
            return;
        }
        BackendUnavailableException e;
        if (failed.isEmpty()) {
            StringBuilder sb = new StringBuilder("no RDMA backend available");
            if (unavailable.isEmpty()) {
                sb.append(": no transport provider found (is backend-tcp or backend-ibverbs on the class/module path?)");
            } else {
                sb.append(": ");
                unavailable.forEach((n, r) -> sb.append(n).append(": ").append(r).append("; "));
                sb.setLength(sb.length() - 2);
            }
            e = new BackendUnavailableException(sb.toString());
        } else {
            StringBuilder sb = new StringBuilder("all available RDMA backends failed to initialize: ").append(describe(failed));
            if (!unavailable.isEmpty()) {
                sb.append(" (not available:");
                unavailable.forEach((n, r) -> sb.append(' ').append(n).append(": ").append(r).append(';'));
                sb.setLength(sb.length() - 1);
                sb.append(')');
            }
            e = new BackendUnavailableException(sb.toString());
            failed.values().forEach(e::addSuppressed);
        }
        throw e;
    }

    private static String describe(Map<String, Throwable> failed) {
        StringBuilder sb = new StringBuilder();
        failed.forEach((n, t) -> sb.append(sb.isEmpty() ? "" : "; ").append(n).append(": ").append(
                t.getMessage() == null ? t.toString() : t.getMessage()));
        return sb.toString();
    }

    private static List<BackendProvider> discover() {
        List<BackendProvider> found = new ArrayList<>();
        ServiceLoader<BackendProvider> loader = ServiceLoader.load(BackendProvider.class, RdmaManager.class.getClassLoader());
        for (var it = loader.stream().iterator(); it.hasNext(); ) {
            var p = it.next();
            try {
                found.add(p.get());
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.WARNING, "cannot instantiate transport provider " + p.type().getName() + "; skipping it", e);
            }
        }
        return found;
    }

    private static List<BackendProvider> sortedProviders(List<BackendProvider> providers) {
        Map<String, BackendProvider> byName = new HashMap<>();
        for (BackendProvider p : providers) {
            if (!PROVIDER_NAME.matcher(p.name()).matches()) {
                throw new IllegalArgumentException("transport provider " + p.getClass().getName()
                        + " has an invalid name '" + p.name() + "' (must match " + PROVIDER_NAME + ")");
            }
            BackendProvider previous = byName.putIfAbsent(p.name(), p);
            if (previous != null) {
                throw new IllegalArgumentException("two transport providers are named " + p.name() + ": "
                        + previous.getClass().getName() + " and " + p.getClass().getName());
            }
        }
        return providers.stream()
                .sorted(Comparator.comparingInt(BackendProvider::priority).reversed().thenComparing(BackendProvider::name))
                .toList();
    }

    private static String advertisedHost(String bindHost, String configured) {
        if (!configured.isEmpty()) {
            return configured;
        }
        if (bindHost.equals("0.0.0.0") || bindHost.equals("::") || bindHost.equals("[::]")) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                throw new RdmaException("rdma.bindHost is a wildcard and this machine's host name cannot be resolved; "
                        + "set rdma.advertisedHost", e);
            }
        }
        return bindHost;
    }

    // ------------------------------------------------------------------ construction

    /**
     * A builder of explicit managers (tests, processes that want several).
     *
     * @return a new builder with nothing set
     */
    public static Builder newBuilder() {
        return new Builder();
    }

    /**
     * The process-wide manager, created with default settings (system properties and environment)
     * on first use and closed at JVM shutdown. A closed shared manager is replaced on the next call.
     *
     * @return the shared manager, started
     * @throws BackendUnavailableException if it cannot start; the same failure is reported on every
     *                                     later call, and the control endpoint stays up answering
     *                                     readiness probes with it
     * @throws IllegalArgumentException    if a setting is invalid
     */
    public static RdmaManager shared() {
        synchronized (SHARED_LOCK) {
            if (sharedFailure != null) {
                throw sharedFailure;
            }
            if (shared == null || shared.closed.get()) {
                try {
                    shared = newBuilder().keepEndpointOnFailure().build();
                } catch (RuntimeException e) {
                    sharedFailure = e;
                    throw e;
                }
                RdmaManager m = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(m::close, "rdma4j-shutdown"));
            }
            return shared;
        }
    }

    // ------------------------------------------------------------------ registration

    /**
     * Registers {@code segment} with every transport and returns its token. Returns at once; the
     * work runs on the registration thread.
     *
     * <p><b>Ownership:</b> the caller keeps owning the memory and must keep its arena open until
     * the buffer is released ({@link #release(long)}); closing it earlier makes later remote
     * accesses fail cleanly (never a crash), but a verbs NIC may still have it registered.
     * Prefer {@link #allocate(long)}.
     *
     * @param segment native, writable memory that every thread may access; the caller keeps owning
     *                it and must keep it alive until the buffer is released
     * @return the token; fails with {@link RegistrationException} (a transport refused; the others
     *         were rolled back), {@link ManagerClosedException}, or {@link RdmaTimeoutException} when
     *         the registration ring stayed full for {@code rdma.registration.queueTimeout} (while it
     *         is full, this call waits for room)
     * @throws IllegalArgumentException if the segment is on the heap, empty, read-only, confined to one
     *                                  thread (transports need shared access) or its arena is closed
     */
    public CompletableFuture<RdmaRemoteBuffer> register(MemorySegment segment) {
        checkRegistrable(segment);
        return submitRegistration(segment, null);
    }

    /**
     * Allocates {@code size} bytes of page-aligned, zeroed native memory owned by the manager and
     * registers it.
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
            segment = arena.allocate(size, 4096);
        } catch (OutOfMemoryError | RuntimeException e) {
            arena.close();
            return CompletableFuture.failedFuture(new RdmaException("cannot allocate " + size + " bytes of native memory", e));
        }
        return submitRegistration(segment, arena).thenApply(token -> new RdmaBuffer(this, segment, token));
    }

    private static void checkRegistrable(MemorySegment segment) {
        Objects.requireNonNull(segment, "segment");
        if (!segment.isNative()) {
            throw new IllegalArgumentException("RDMA needs native memory: heap segments cannot be registered "
                    + "(allocate with an Arena, or use RdmaManager.allocate)");
        }
        if (segment.byteSize() == 0) {
            throw new IllegalArgumentException("cannot register a zero-length segment");
        }
        if (segment.isReadOnly()) {
            throw new IllegalArgumentException("cannot register a read-only segment: peers may write into it");
        }
        if (!segment.scope().isAlive()) {
            throw new IllegalArgumentException("cannot register a segment whose arena is closed");
        }
        if (!isShared(segment)) {
            throw new IllegalArgumentException("cannot register a thread-confined segment: transports access it "
                    + "from their own threads; allocate it from Arena.ofShared(), Arena.ofAuto() or Arena.global()");
        }
    }

    /** A thread that never starts: only segments every thread may access are accessible by it. */
    private static final Thread ANY_OTHER_THREAD = Thread.ofPlatform().unstarted(() -> { });

    /** Whether every thread may access {@code segment} (not confined to its owner thread). */
    static boolean isShared(MemorySegment segment) {
        return segment.isAccessibleBy(ANY_OTHER_THREAD);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private CompletableFuture<RdmaRemoteBuffer> submitRegistration(MemorySegment segment, Arena owned) {
        CompletableFuture<Object> result = new CompletableFuture<>();
        try {
            ring.register(segment, owned, result);
        } catch (IllegalStateException closedRing) {
            closeQuietly(owned);
            return CompletableFuture.failedFuture(closedError());
        } catch (RdmaException full) { // the ring stayed full
            closeQuietly(owned);
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
     * its owner over the control endpoint, within 30 seconds. Idempotent.
     *
     * @param buffer the token of the buffer, whether this manager or a peer owns it
     * @return fails with {@link RemoteAccessException} when the token's access key is wrong,
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
            try {
                table.lookup(buffer.id(), buffer.accessKey());
            } catch (BufferAccessException e) {
                if (e.reason() == BufferAccessException.Reason.WRONG_KEY) {
                    return CompletableFuture.failedFuture(new RemoteAccessException(null, e.getMessage(), e));
                }
                return CompletableFuture.completedFuture(null);
            }
            return release(buffer.id());
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedError());
        }
        return controlClient.release(buffer.owner(), buffer.id(), buffer.accessKey(), deadline)
                .handle((ok, failure) -> {
                    if (failure != null) {
                        throw Errors.toPublic(null, failure);
                    }
                    return null;
                });
    }

    /**
     * Releases and waits, for {@link RdmaBuffer#close()}: a full ring does not lose the release,
     * which waits for room ({@code rdma.registration.queueTimeout}).
     */
    void awaitRelease(long bufferId, Duration timeout) {
        try {
            release(bufferId).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw Errors.toPublic(null, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmaException("interrupted while releasing buffer " + bufferId, e);
        } catch (TimeoutException e) {
            throw new RdmaTimeoutException(null, "releasing buffer " + bufferId + " took longer than " + timeout, e);
        }
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
     *         {@link NoCompatibleBackendException}
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
     * @throws IllegalArgumentException if {@code local} is larger than the remote buffer, on the heap or closed
     */
    public CompletableFuture<Void> write(RdmaRemoteBuffer remote, MemorySegment local, Duration timeout) {
        return newAction().writeFrom(remote, local).submit(timeout);
    }

    CompletableFuture<Void> submit(List<RdmaAction.Op> ops, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        if (ops.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedError());
        }
        try {
            return runGroups(groups(ops), deadline, timeout);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Submits each transport's group, all in parallel; the future fails with every group's error. */
    private CompletableFuture<Void> runGroups(Map<Opened, List<BackendOp>> groups, Deadline deadline, Duration timeout) {
        List<CompletableFuture<Void>> running = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (var group : groups.entrySet()) {
            Opened b = group.getKey();
            int count = group.getValue().size();
            CompletableFuture<Void> f;
            try {
                f = Objects.requireNonNull(b.backend().submit(List.copyOf(group.getValue()), deadline),
                        "backend returned no future");
            } catch (Throwable t) {
                f = CompletableFuture.failedFuture(t);
            }
            // A transport must honour the deadline itself; this guard only makes sure a broken one
            // cannot leave the caller waiting forever.
            CompletableFuture<Void> guarded = new CompletableFuture<>();
            Watchdog.Guard guard = watchdog.arm(deadline.remainingNanos() + DEADLINE_GRACE_NANOS,
                    () -> guarded.completeExceptionally(new RdmaTimeoutException(b.name(), "submit timed out: "
                            + b.name() + " did not finish " + count + " op(s) within " + timeout, null)));
            f.whenComplete((ok, t) -> {
                guard.disarm();
                if (t == null) {
                    guarded.complete(null);
                } else {
                    guarded.completeExceptionally(Errors.unwrap(t));
                }
            });
            running.add(guarded);
            names.add(b.name());
        }
        return CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).handle((ok, ignored) -> {
            Map<String, Throwable> failures = new LinkedHashMap<>();
            for (int i = 0; i < running.size(); i++) {
                CompletableFuture<Void> f = running.get(i);
                if (f.isCompletedExceptionally()) {
                    Throwable t = f.exceptionNow();
                    failures.put(names.get(i), Errors.toPublic(names.get(i), t));
                }
            }
            if (!failures.isEmpty()) {
                throw new RdmaSubmitException(failures);
            }
            return null;
        });
    }

    /**
     * The blocking form of {@link #submit}: ops that all go to one transport run on the calling
     * thread ({@link Backend#submitAndWait}); ops spread over several transports still run in
     * parallel, and the caller waits for all.
     */
    void submitAndWait(List<RdmaAction.Op> ops, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        if (ops.isEmpty()) {
            return;
        }
        if (closed.get()) {
            throw closedError();
        }
        Map<Opened, List<BackendOp>> groups = groups(ops);
        if (groups.size() > 1) {
            try {
                runGroups(groups, deadline, timeout).join();
                return;
            } catch (java.util.concurrent.CompletionException e) {
                throw (RuntimeException) Errors.unwrap(e);
            }
        }
        var group = groups.entrySet().iterator().next();
        Opened b = group.getKey();
        try {
            b.backend().submitAndWait(List.copyOf(group.getValue()), deadline);
        } catch (Throwable t) {
            throw new RdmaSubmitException(Map.of(b.name(), Errors.toPublic(b.name(), t)));
        }
    }

    /** Routes every op to its transport, in order; throws before anything is sent when one cannot go. */
    private Map<Opened, List<BackendOp>> groups(List<RdmaAction.Op> ops) {
        Map<Opened, List<BackendOp>> groups = new LinkedHashMap<>();
        for (RdmaAction.Op op : ops) {
            Opened chosen = route(op.remote());
            if (chosen == null) {
                throw new NoCompatibleBackendException("no compatible RDMA backend for buffer: "
                        + op.remote() + " (this manager runs " + backendNames + ")");
            }
            if (!op.local().scope().isAlive()) {
                throw new IllegalStateException("the arena of a local segment was closed before submit");
            }
            groups.computeIfAbsent(chosen, k -> new ArrayList<>())
                    .add(new BackendOp(op.type(), op.local(), op.remote().refFor(chosen.name())));
        }
        return groups;
    }

    private Opened route(RdmaRemoteBuffer remote) {
        for (Opened b : backends) {
            if (remote.hasTransport(b.name())) {
                return b;
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ peers

    /**
     * Asks each peer manager, at its control endpoint, whether it finished starting; all share one
     * deadline. Never fails: a peer that does not answer in time is {@link PeerReadiness.State#UNREACHABLE}.
     *
     * @param peers   the control endpoints to ask; one asked twice is probed once
     * @param timeout the time all probes together may take, counted from this call
     * @return one answer per distinct peer, in the order given
     */
    public CompletableFuture<Map<Endpoint, PeerReadiness>> probeReadiness(Collection<Endpoint> peers, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        Map<Endpoint, CompletableFuture<PeerReadiness>> asks = new LinkedHashMap<>();
        for (Endpoint peer : peers) {
            asks.computeIfAbsent(peer, p -> controlClient.readiness(p, deadline)
                    .exceptionally(t -> new PeerReadiness(p, PeerReadiness.State.UNREACHABLE, String.valueOf(Errors.unwrap(t)))));
        }
        return CompletableFuture.allOf(asks.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
            Map<Endpoint, PeerReadiness> out = new LinkedHashMap<>();
            asks.forEach((p, f) -> out.put(p, f.join()));
            return out;
        });
    }

    // ------------------------------------------------------------------ introspection

    /**
     * Names of the transports this manager runs, fastest first.
     *
     * @return an immutable list of transport names
     */
    public List<String> backends() {
        return backendNames;
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

    /** Closes the endpoints kept up by failed starts (tests). */
    static void closeLingeringEndpoints() {
        LINGERING.forEach(ControlServer::close);
        LINGERING.clear();
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
        state = PeerReadiness.State.FAILED;
        startError = "manager closed";
        if (ring.isConsumerThread()) {
            // Called from a continuation of one of our futures: finish on another thread.
            Thread.ofPlatform().name("rdma4j-close").daemon().start(this::finishClose);
        } else {
            finishClose();
        }
    }

    private void finishClose() {
        try {
            ring.close();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "closing the registration ring failed", e);
        }
        controlClient.close();
        controlServer.close();
        watchdog.close();
        LOG.log(Level.DEBUG, () -> "rdma4j manager " + incarnation() + " closed");
    }

    private ManagerClosedException closedError() {
        return new ManagerClosedException("RDMA manager " + controlEndpoint + " is closed");
    }

    private static void closeQuietly(Arena arena) {
        if (arena != null) {
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "RdmaManager[" + controlEndpoint + ", incarnation=" + incarnation() + ", transports=" + backendNames
                + (closed.get() ? ", closed" : "") + "]";
    }

    // ------------------------------------------------------------------ registration thread

    /** Runs on the registration ring's single consumer thread only. */
    private final class Worker implements RegistrationRing.Worker {
        private boolean shutDown;

        @Override
        public void register(MemorySegment segment, Arena ownedArena, CompletableFuture<Object> result) {
            if (shutDown) {
                closeQuietly(ownedArena);
                result.completeExceptionally(closedError());
                return;
            }
            long id = table.nextId();
            if (!segment.scope().isAlive()) {
                result.completeExceptionally(new IllegalArgumentException(
                        "the segment's arena was closed before buffer " + id + " could be registered"));
                return;
            }
            byte[] key = new byte[RdmaRemoteBuffer.KEY_BYTES];
            random.nextBytes(key);
            Map<String, byte[]> contexts = new LinkedHashMap<>();
            List<Opened> done = new ArrayList<>();
            for (Opened b : backends) {
                try {
                    byte[] ctx = Objects.requireNonNull(b.backend().register(id, segment), "null context");
                    if (ctx.length > Backend.MAX_CONTEXT_BYTES) {
                        done.add(b); // it did register: roll it back too
                        throw new IllegalStateException("transport returned a " + ctx.length + "-byte context, more than "
                                + Backend.MAX_CONTEXT_BYTES);
                    }
                    contexts.put(b.name(), ctx);
                    done.add(b);
                } catch (Throwable t) {
                    rollBack(id, done, ownedArena);
                    result.completeExceptionally(new RegistrationException(b.name(), "registering buffer " + id + " ("
                            + segment.byteSize() + " bytes) with " + b.name() + " failed: " + t.getMessage(), t));
                    return;
                }
            }
            RdmaRemoteBuffer token;
            try {
                token = new RdmaRemoteBuffer(incarnation, controlEndpoint, id, segment.byteSize(), key, contexts);
            } catch (RuntimeException e) { // e.g. more transports than a token can carry
                rollBack(id, done, ownedArena);
                result.completeExceptionally(new RegistrationException(null, "buffer " + id
                        + " cannot be described by a token: " + e.getMessage(), e));
                return;
            }
            table.put(new Registration(id, segment, key, ownedArena));
            result.complete(token);
        }

        /** Releases {@code id} from the transports that registered it (errors only logged), frees owned memory. */
        private void rollBack(long id, List<Opened> done, Arena ownedArena) {
            for (Opened d : done) {
                try {
                    d.backend().release(id);
                } catch (Throwable rollback) {
                    LOG.log(Level.WARNING, "rolling back buffer " + id + " on " + d.name() + " failed", rollback);
                }
            }
            closeQuietly(ownedArena);
        }

        @Override
        public void release(long id, CompletableFuture<Object> result) {
            Registration r = table.remove(id);
            if (r == null) {
                result.complete(null);
                return;
            }
            Map<String, Throwable> failures = releaseEverywhere(r);
            if (failures.isEmpty()) {
                result.complete(null);
            } else {
                result.completeExceptionally(new RdmaReleaseException(failures));
            }
        }

        private Map<String, Throwable> releaseEverywhere(Registration r) {
            r.markReleased();
            Map<String, Throwable> failures = new LinkedHashMap<>();
            for (Opened b : backends) {
                try {
                    b.backend().release(r.id());
                } catch (Throwable t) {
                    failures.put(b.name(), t);
                }
            }
            r.backendsReleased();
            return failures;
        }

        @Override
        public void close(CompletableFuture<Object> result) {
            shutDown = true;
            for (Registration r : table.snapshot()) {
                table.remove(r.id());
                Map<String, Throwable> failures = releaseEverywhere(r);
                if (!failures.isEmpty()) {
                    LOG.log(Level.WARNING, "at close: " + new RdmaReleaseException(failures).getMessage());
                }
            }
            for (int i = backends.size() - 1; i >= 0; i--) {
                Opened b = backends.get(i);
                try {
                    b.backend().close();
                } catch (Throwable t) {
                    LOG.log(Level.WARNING, "closing transport " + b.name() + " failed", t);
                }
            }
            result.complete(null);
        }
    }

    // ------------------------------------------------------------------ control endpoint

    private final class Service implements ControlService {
        @Override
        public void release(long bufferId, byte[] accessKey) throws Exception {
            try {
                table.lookup(bufferId, accessKey);
            } catch (BufferAccessException e) {
                if (e.reason() == BufferAccessException.Reason.WRONG_KEY) {
                    throw e;
                }
                return; // unknown or already released: releasing is idempotent
            }
            try {
                RdmaManager.this.release(bufferId).get(DEFAULT_REMOTE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw (e.getCause() instanceof Exception ex) ? ex : e;
            }
        }

        @Override
        public PeerReadiness readiness() {
            return new PeerReadiness(controlEndpoint != null ? controlEndpoint : new Endpoint("unknown", 1), state, startError);
        }

        @Override
        public byte[] backendRequest(String backend, Endpoint from, byte[] payload) throws Exception {
            ControlChannel.Handler h = controlHandlers.get(backend);
            if (h == null) {
                throw new IllegalArgumentException("no transport named " + backend + " handles control requests here");
            }
            return h.handle(from, payload);
        }
    }

    private final class Context implements BackendContext {
        private final String name;
        private final String bindHost;
        private final String advertisedHost;

        Context(String name, String bindHost, String advertisedHost) {
            this.name = name;
            this.bindHost = bindHost;
            this.advertisedHost = advertisedHost;
        }

        @Override
        public Settings settings() {
            return settings;
        }

        @Override
        public RegistrationLookup registrations() {
            return table;
        }

        @Override
        public ControlChannel control() {
            return new ControlChannel() {
                @Override
                public void onRequest(Handler handler) {
                    if (controlHandlers.putIfAbsent(name, Objects.requireNonNull(handler, "handler")) != null) {
                        throw new IllegalStateException("transport " + name + " already installed a control handler");
                    }
                }

                @Override
                public CompletableFuture<byte[]> request(Endpoint peer, byte[] payload, Deadline deadline) {
                    if (payload.length > MAX_PAYLOAD_BYTES) {
                        throw new IllegalArgumentException("control payload of " + payload.length + " bytes exceeds "
                                + MAX_PAYLOAD_BYTES);
                    }
                    return controlClient.backendRequest(peer, name, payload, deadline);
                }
            };
        }

        @Override
        public Endpoint controlEndpoint() {
            return controlEndpoint;
        }

        @Override
        public String advertisedHost() {
            return advertisedHost;
        }

        @Override
        public String bindHost() {
            return bindHost;
        }
    }

    // ------------------------------------------------------------------ builder

    /**
     * Configures and starts a manager. Not thread-safe; build once.
     */
    public static final class Builder {
        private final Map<String, String> values = new LinkedHashMap<>();
        private List<BackendProvider> providers;
        private Function<String, String> properties = System::getProperty;
        private Function<String, String> environment = System::getenv;
        private boolean keepEndpointOnFailure;

        private Builder() {
        }

        /**
         * When the start fails, leave the control endpoint up answering readiness probes with the
         * failure (what {@link #shared()} does, so that peers learn why). Package-private: tests.
         */
        Builder keepEndpointOnFailure() {
            this.keepEndpointOnFailure = true;
            return this;
        }

        /**
         * Sets a setting by key ({@code rdma.tcp.parallelism}); wins over system properties and the
         * environment. Unknown keys and invalid values fail {@link #build()}.
         *
         * @param key   the setting's key; not {@code null}
         * @param value the value as text; not {@code null}
         * @return this builder
         */
        public Builder set(String key, String value) {
            values.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /**
         * Sets a typed setting from its text form.
         *
         * @param setting the setting
         * @param value   the value; its {@link String#valueOf(Object)} text is what is parsed
         * @return this builder
         */
        public Builder set(Setting<?> setting, Object value) {
            return set(setting.key(), String.valueOf(value));
        }

        /**
         * Uses exactly these providers instead of {@link ServiceLoader} discovery (embedding, tests).
         *
         * @param providers the providers, copied; no {@code null} elements
         * @return this builder
         */
        public Builder providers(List<? extends BackendProvider> providers) {
            this.providers = List.copyOf(providers);
            return this;
        }

        /**
         * Reads neither system properties nor environment variables: only {@link #set} values and
         * defaults count. For tests and embedders that must not be affected by the process's setup.
         *
         * @return this builder
         */
        public Builder isolated() {
            this.properties = k -> null;
            this.environment = k -> null;
            return this;
        }

        /**
         * Starts the manager: resolves and validates every setting, opens the control endpoint,
         * opens every available transport.
         *
         * @return the started manager; the caller owns it and must close it
         * @throws IllegalArgumentException    listing every invalid setting or unknown key
         * @throws BackendUnavailableException when no transport is available or none opened
         * @throws RdmaException               when the control endpoint cannot be opened
         */
        public RdmaManager build() {
            return new RdmaManager(this);
        }
    }
}
