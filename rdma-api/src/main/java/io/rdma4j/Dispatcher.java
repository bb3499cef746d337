package io.rdma4j;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rdma4j.internal.Errors;
import io.rdma4j.internal.LocalMemoryCache;
import io.rdma4j.internal.Registration;
import io.rdma4j.internal.RegistrationTable;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Watchdog;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Dispatch of actions: routes every op to the first transport, in priority order, that this
 * manager runs and the token advertises; turns the public prefix and slice rules into exact
 * {@link TransportOp}s; runs each transport's group; and reports every failure.
 *
 * <p>Per-token work happens once: the route and the transport's decoded context are cached per
 * token object (bounded, weakly held). One watchdog guard per submitted action bounds a transport
 * that fails to honour the deadline; it and a caller's {@code cancel()} complete the transports'
 * futures, which obliges them to stop touching the caller's memory.
 */
final class Dispatcher {

    /** Extra time a transport gets past the deadline to report its own timeout before the manager reports one. */
    static final long DEADLINE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final List<OpenTransport> transports;
    private final List<String> names;
    /** Per transport rank, the one-name list an action that used only that transport reports. */
    private final List<List<String>> singleNames;
    private final RegistrationTable table;
    private final Watchdog watchdog;
    private final NanoClock clock;
    private final Cache<RdmaRemoteBuffer, Route> routes;
    private final ManagerStats stats;
    private final RouteLog routeLog;
    /**
     * The token of the last op routed from the cache, and its route: ops on one token in a row,
     * the common case, skip the cache lookup (and its read recording). Holds that one token strongly.
     */
    private volatile LastRoute lastRoute;

    private record LastRoute(RdmaRemoteBuffer token, Route route) {
    }

    /** Where ops on one token go: the transport and its rank, its view of the token, its decoded context. */
    private record Route(OpenTransport transport, int rank, RemoteBufferRef ref, Object decoded) {
    }

    /**
     * Asks whether action events are recorded: {@link jdk.jfr.Event#isEnabled()} reads the event
     * type's setting, not the instance, so one shared instance answers for all and no event object
     * is allocated per action while recording is off.
     */
    private static final RdmaEvents.Action EVENTS = new RdmaEvents.Action();

    /** An action's ops for one transport, and the cached local memory they hold. */
    private static final class Group {
        final OpenTransport transport;
        final int rank;
        final List<TransportOp> ops;
        /** Local memory taken from the transport's cache for these ops; {@code null} until the first. */
        List<LocalMemoryCache.Entry> held;
        volatile CompletableFuture<Void> running;
        long startNanos;
        RdmaEvents.Action event;

        Group(OpenTransport transport, int rank, int maxOps) {
            this.transport = transport;
            this.rank = rank;
            this.ops = new ArrayList<>(Math.min(maxOps, 16));
        }

        void hold(LocalMemoryCache.Entry entry) {
            if (held == null) {
                held = new ArrayList<>(1);
            }
            held.add(entry);
        }

        void start(long nowNanos) {
            if (EVENTS.isEnabled()) {
                RdmaEvents.Action e = new RdmaEvents.Action();
                e.begin();
                event = e;
            }
            startNanos = nowNanos;
        }

        /** Counts the finished group and records its event. */
        void finish(ManagerStats stats, Throwable failure, long endNanos) {
            stats.group(rank, ops, endNanos - startNanos, failure != null);
            RdmaEvents.Action e = event;
            if (e != null && e.shouldCommit()) {
                e.transport = transport.name();
                e.ops = ops.size();
                for (TransportOp op : ops) {
                    e.bytes += op.length();
                    e.reads += op.type() == TransportOp.OpType.READ_INTO_LOCAL ? 1 : 0;
                }
                e.outcome = RdmaEvents.outcome(failure);
                e.commit();
            }
        }

        void releaseHeld() {
            if (held != null) {
                held.forEach(LocalMemoryCache.Entry::release);
                held = null;
            }
        }
    }

    Dispatcher(List<OpenTransport> transports, RegistrationTable table, Watchdog watchdog, NanoClock clock,
               int tokenCacheEntries, ManagerStats stats, List<TransportInfo> discovered) {
        this.stats = stats;
        this.routeLog = new RouteLog(discovered);
        this.transports = transports;
        this.names = transports.stream().map(OpenTransport::name).toList();
        this.singleNames = names.stream().map(List::of).toList();
        this.table = table;
        this.watchdog = watchdog;
        this.clock = clock;
        this.routes = Caffeine.newBuilder().weakKeys().maximumSize(tokenCacheEntries).executor(Runnable::run).build();
    }

    /**
     * Routes and submits the ops; {@code ops} is read during the call only.
     *
     * @param wantResult whether the future completes with an {@link RdmaResult}; otherwise with
     *                   {@code null} (no result is built for callers that ignore it)
     * @return an {@link ActionFuture} once the ops were handed to their transports
     */
    CompletableFuture<RdmaResult> submit(List<RdmaAction.Op> ops, Set<String> required, Duration timeout,
                                         boolean wantResult) {
        Deadline deadline = Deadline.after(timeout, clock);
        if (ops.isEmpty()) {
            return CompletableFuture.completedFuture(wantResult ? RdmaResult.EMPTY : null);
        }
        List<Group> groups;
        try {
            groups = groups(ops, required);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return run(groups, deadline, timeout, wantResult);
    }

    /**
     * The future of a submitted action. {@code cancel()} reaches every transport's future;
     * {@link #help()} lets a thread that is about to wait for the action do the transports' work
     * itself, where a transport offers it, instead of waiting for one of the transport's threads to
     * do it and then wake this one.
     */
    static final class ActionFuture extends CompletableFuture<RdmaResult> {
        private final List<Group> groups;

        private ActionFuture(List<Group> groups) {
            this.groups = groups;
        }

        /**
         * For each transport whose future is a {@link RunnableFuture} and not done, calls its
         * {@code run()}: by the {@link io.rdma4j.spi.Transport#submit} contract it does the work
         * that no thread has started yet on the calling thread, and otherwise returns at once. It
         * does not wait for work another thread is doing.
         */
        void help() {
            for (Group g : groups) {
                if (g.running instanceof RunnableFuture<?> work && !work.isDone()) {
                    work.run();
                }
            }
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            boolean cancelled = super.cancel(mayInterruptIfRunning);
            if (cancelled) {
                for (Group g : groups) {
                    g.running.cancel(false); // obliges the transport to stop touching the caller's memory
                }
            }
            return cancelled;
        }
    }

    /**
     * The blocking form of {@link #submit}: ops that all go to one transport run on the calling
     * thread; ops spread over several transports still run in parallel, and the caller waits for all.
     */
    RdmaResult submitAndWait(List<RdmaAction.Op> ops, Set<String> required, Duration timeout) {
        Deadline deadline = Deadline.after(timeout, clock);
        if (ops.isEmpty()) {
            return RdmaResult.EMPTY;
        }
        List<Group> groups = groups(ops, required);
        if (groups.size() > 1) {
            try {
                ActionFuture f = run(groups, deadline, timeout, true);
                f.help();
                return f.join();
            } catch (CompletionException e) {
                throw (RuntimeException) Errors.unwrap(e);
            }
        }
        Group g = groups.getFirst();
        Throwable failure = null;
        g.start(System.nanoTime());
        long end = 0;
        try {
            g.transport.transport().submitAndWait(g.ops, deadline);
            end = System.nanoTime();
            return result(groups, g.startNanos, end);
        } catch (Throwable t) {
            end = System.nanoTime();
            failure = Errors.toPublic(g.transport.name(), t);
            throw new RdmaSubmitException(Map.of(g.transport.name(), failure));
        } finally {
            g.releaseHeld();
            g.finish(stats, failure, end);
        }
    }

    /** Submits each transport's group, all in parallel, under one watchdog guard. */
    private ActionFuture run(List<Group> groups, Deadline deadline, Duration timeout, boolean wantResult) {
        long startNanos = System.nanoTime();
        ActionFuture result = new ActionFuture(groups);
        for (Group g : groups) {
            CompletableFuture<Void> f;
            g.start(startNanos);
            try {
                f = g.transport.transport().submit(List.copyOf(g.ops), deadline);
                if (f == null) {
                    f = CompletableFuture.failedFuture(new IllegalStateException(g.transport.name() + " returned no future"));
                }
            } catch (Throwable t) {
                f = CompletableFuture.failedFuture(t);
            }
            g.running = f;
        }
        // A transport must honour the deadline itself; this guard only makes sure a broken one
        // cannot leave the caller waiting: completing its future obliges it to stop.
        Watchdog.Guard guard = watchdog.arm(deadline.remainingNanos() + DEADLINE_GRACE_NANOS, () -> {
            for (Group g : groups) {
                g.running.completeExceptionally(new TransportException(TransportException.Kind.TIMEOUT, "submit timed out: "
                        + g.transport.name() + " did not finish " + g.ops.size() + " op(s) within " + timeout));
            }
        });
        CompletableFuture<?> all = groups.size() == 1 ? groups.getFirst().running
                : CompletableFuture.allOf(groups.stream().map(g -> g.running).toArray(CompletableFuture[]::new));
        all.whenComplete((ok, ignored) -> finish(groups, guard, result, startNanos, wantResult));
        return result;
    }

    /** Once every group's future completed: frees what the action held and completes its future. */
    private void finish(List<Group> groups, Watchdog.Guard guard, CompletableFuture<RdmaResult> result, long startNanos,
                        boolean wantResult) {
        guard.disarm();
        long end = System.nanoTime(); // one reading times the action and each of its groups
        Map<String, Throwable> failures = null;
        for (Group g : groups) {
            g.releaseHeld();
            Throwable failure = null;
            if (g.running.isCompletedExceptionally()) {
                failure = Errors.toPublic(g.transport.name(), g.running.isCancelled()
                        ? new CancellationException("cancelled") : g.running.exceptionNow());
                if (failures == null) {
                    failures = new LinkedHashMap<>();
                }
                failures.put(g.transport.name(), failure);
            }
            g.finish(stats, failure, end);
        }
        if (failures == null) {
            result.complete(wantResult ? result(groups, startNanos, end) : null);
        } else {
            result.completeExceptionally(new RdmaSubmitException(failures));
        }
    }

    /** What the finished groups did, from {@code startNanos} to {@code endNanos}. */
    private RdmaResult result(List<Group> groups, long startNanos, long endNanos) {
        List<String> names;
        if (groups.size() == 1) {
            names = singleNames.get(groups.getFirst().rank); // immutable: the result keeps it without a copy
        } else {
            names = new ArrayList<>(groups.size());
            for (Group g : groups) {
                names.add(g.transport.name());
            }
        }
        int ops = 0;
        long bytes = 0;
        for (Group g : groups) {
            ops += g.ops.size();
            for (TransportOp op : g.ops) {
                bytes += op.length();
            }
        }
        return new RdmaResult(names, ops, bytes, Duration.ofNanos(Math.max(0, endNanos - startNanos)));
    }

    /** Routes every op to its transport, in order; throws before anything is sent when one cannot go. */
    private List<Group> groups(List<RdmaAction.Op> ops, Set<String> required) {
        List<Group> groups = new ArrayList<>(1);
        try {
            for (RdmaAction.Op op : ops) {
                Route route = route(op.remote(), required);
                Group g = groupOf(groups, route, ops.size());
                MemorySegment local = op.local();
                if (!local.scope().isAlive()) {
                    throw new IllegalStateException("the arena of a local segment was closed before submit");
                }
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL && local.byteSize() != op.remote().size()) {
                    local = local.asSlice(0, op.remote().size());
                }
                g.ops.add(new TransportOp(op.type(), local, localMemory(g, local), route.ref, route.decoded,
                        op.remote().offset()));
            }
            return groups;
        } catch (RuntimeException | Error e) {
            groups.forEach(Group::releaseHeld);
            throw e;
        }
    }

    private static Group groupOf(List<Group> groups, Route route, int maxOps) {
        for (Group g : groups) {
            if (g.transport == route.transport) {
                return g;
            }
        }
        Group g = new Group(route.transport, route.rank, maxOps);
        groups.add(g);
        return g;
    }

    /** The prepared local memory for {@code local}: its registration's, or one from the cache. */
    private LocalMemory localMemory(Group g, MemorySegment local) {
        LocalMemoryCache cache = g.transport.local();
        if (cache == null) {
            return null;
        }
        Registration r = table.containing(local);
        LocalMemory registered = r == null ? null : r.localMemory(g.transport.name());
        if (registered != null) {
            return registered;
        }
        try {
            LocalMemoryCache.Entry e = cache.acquire(local);
            g.hold(e);
            return e.memory();
        } catch (Exception e) {
            throw new RdmaException(g.transport.name(), "preparing " + local.byteSize() + " bytes of local memory for "
                    + g.transport.name() + " failed: " + e.getMessage(), e);
        }
    }

    /**
     * The route of ops on {@code remote}: cached when any transport may carry them; worked out
     * afresh, and not cached, when the cached one is not among {@code required}.
     */
    private Route route(RdmaRemoteBuffer remote, Set<String> required) {
        LastRoute last = lastRoute;
        Route r = last != null && last.token == remote ? last.route : routes.getIfPresent(remote);
        if (r != null && (required == null || required.contains(r.transport.name()))) {
            if (last == null || last.token != remote) {
                lastRoute = new LastRoute(remote, r);
            }
            return r;
        }
        Map<String, String> declined = new LinkedHashMap<>(0);
        for (int rank = 0; rank < transports.size(); rank++) {
            OpenTransport t = transports.get(rank);
            if (remote.hasTransport(t.name()) && (required == null || required.contains(t.name()))) {
                RemoteBufferRef ref = remote.refFor(t.name());
                Object decoded;
                try {
                    decoded = t.transport().decodeContext(ref);
                } catch (TransportException e) {
                    if (e.kind() == TransportException.Kind.PEER_UNREACHABLE) {
                        declined.put(t.name(), e.getMessage());    // cannot reach this owner: the next one may
                        continue;
                    }
                    throw new IllegalArgumentException("the token's " + t.name() + " context is malformed: " + e.getMessage(), e);
                } catch (RuntimeException e) {
                    throw new IllegalArgumentException("the token's " + t.name() + " context is malformed: " + e.getMessage(), e);
                }
                r = new Route(t, rank, ref, decoded);
                if (required == null) {
                    routes.put(remote, r);
                    routeLog.chosen(remote, t.name(), declined);
                }
                return r;
            }
        }
        StringBuilder why = new StringBuilder();
        declined.forEach((name, reason) -> why.append(why.isEmpty() ? "; declined: " : "; ").append(name).append(": ")
                .append(reason));
        throw new NoCompatibleTransportException("no compatible RDMA transport for buffer: " + remote
                + " (this manager runs " + names + ", the token offers " + new TreeSet<>(remote.transports())
                + (required == null ? "" : ", the action requires " + new TreeSet<>(required)) + why + ")");
    }

    /** Drops prepared local memory whose segments' arenas were closed. */
    void sweepLocalMemory() {
        for (OpenTransport t : transports) {
            if (t.local() != null) {
                t.local().sweep();
            }
        }
    }
}
