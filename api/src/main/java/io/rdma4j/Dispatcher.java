package io.rdma4j;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.rdma4j.internal.Errors;
import io.rdma4j.internal.LocalMemoryCache;
import io.rdma4j.internal.registration.Registration;
import io.rdma4j.internal.registration.RegistrationTable;
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
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * Dispatch of actions: routes every op to the first transport, in priority order, that this
 * manager runs and the token advertises; turns the public prefix and slice rules into exact
 * {@link TransportOp}s; runs each transport's group; and reports every failure.
 *
 * <p>Per-token work happens once: the route and the transport's decoded context are cached per
 * token object (bounded, weakly held). One watchdog guard per submitted action that a transport
 * did not finish within its {@code submit} call bounds a transport that fails to honour the
 * deadline; it and a caller's {@code cancel()} cancel the transports' futures, which returns only
 * once the transports stopped touching the caller's memory.
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
     * The token of the last op of the last action routed, and its route: actions on one token in
     * a row, the common case, skip the cache lookup (and its read recording). Holds that one token
     * strongly. Within an action, ops on one token in a row take its route once without this.
     */
    private volatile LastRoute lastRoute;

    private record LastRoute(RdmaRemoteBuffer token, Route route) {
    }

    /** Where ops on one token go: the transport and its rank, its view of the token, its decoded context. */
    private record Route(OpenTransport transport, int rank, RemoteBufferRef ref, Object decoded) {
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
     * @return an {@link ActionFuture} once the ops were handed to their transports; a failed future
     *         when they could not be routed
     */
    CompletableFuture<RdmaResult> submit(RdmaAction action, List<RdmaAction.Op> ops, Set<String> required,
                                         Duration timeout, boolean wantResult) {
        long startNanos = System.nanoTime();
        Deadline deadline = deadline(timeout, startNanos);
        if (ops.isEmpty()) {
            return CompletableFuture.completedFuture(wantResult ? RdmaResult.EMPTY : null);
        }
        ActionGroup groups;
        try {
            groups = groups(action, ops, required);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return run(groups, deadline, timeout, wantResult, startNanos);
    }

    /**
     * The blocking form of {@link #submit}: ops that all go to one transport run on the calling
     * thread; ops spread over several transports still run in parallel, and the caller waits for all.
     */
    RdmaResult submitAndWait(RdmaAction action, List<RdmaAction.Op> ops, Set<String> required, Duration timeout) {
        long startNanos = System.nanoTime();
        Deadline deadline = deadline(timeout, startNanos);
        if (ops.isEmpty()) {
            return RdmaResult.EMPTY;
        }
        ActionGroup g = groups(action, ops, required);
        if (g.next != null) {
            try {
                return run(g, deadline, timeout, true, startNanos).join();
            } catch (CompletionException e) {
                throw (RuntimeException) Errors.unwrap(e);
            }
        }
        Throwable failure = null;
        g.start(startNanos);
        long end = 0;
        try {
            g.transport.transport().submitAndWait(g.ops, deadline);
            end = System.nanoTime();
            return result(g, g.startNanos, end);
        } catch (Throwable t) {
            end = System.nanoTime();
            failure = Errors.toPublic(g.transport.name(), t);
            throw new RdmaSubmitException(Map.of(g.transport.name(), failure));
        } finally {
            g.releaseHeld();
            g.finish(stats, failure, end);
        }
    }

    /**
     * Submits each transport's group, all in parallel. Unless every transport's future is done when
     * its submit returns, one watchdog guard bounds them all. {@code startNanos}: when the submit
     * began ({@link System#nanoTime()}), from which the action is timed.
     */
    private ActionFuture run(ActionGroup groups, Deadline deadline, Duration timeout, boolean wantResult,
                             long startNanos) {
        ActionFuture result = new ActionFuture(this, groups, startNanos, wantResult);
        boolean allDone = true;
        int count = 0;
        for (ActionGroup g = groups; g != null; g = g.next) {
            CompletableFuture<Void> f;
            g.start(startNanos);
            try {
                f = g.transport.transport().submit(g.ops, deadline);
                if (f == null) {
                    f = CompletableFuture.failedFuture(new IllegalStateException(g.transport.name() + " returned no future"));
                }
            } catch (Throwable t) {
                f = CompletableFuture.failedFuture(t);
            }
            g.running = f;
            allDone &= f.isDone();
            count++;
        }
        if (!allDone) {
            // A transport must honour the deadline itself; this guard only makes sure a broken one
            // cannot leave the caller waiting: cancelling its future obliges it to stop touching the
            // caller's memory before the cancel returns, and the action reports the timeout.
            result.guard = watchdog.arm(deadline.remainingNanos() + DEADLINE_GRACE_NANOS, () -> {
                StringBuilder late = new StringBuilder("submit timed out:");
                for (ActionGroup g = groups; g != null; g = g.next) {
                    if (!g.running.isDone()) {
                        late.append(' ').append(g.transport.name()).append(" did not finish ").append(g.ops.size())
                                .append(" op(s) within ").append(timeout).append(';');
                    }
                }
                result.overran = late.substring(0, late.length() - 1);
                for (ActionGroup g = groups; g != null; g = g.next) {
                    g.running.cancel(false);
                }
            });
        }
        groups.action = result;
        if (count == 1) {
            groups.running.whenComplete(groups);
        } else {
            CompletableFuture<?>[] all = new CompletableFuture<?>[count];
            int i = 0;
            for (ActionGroup g = groups; g != null; g = g.next) {
                all[i++] = g.running;
            }
            CompletableFuture.allOf(all).whenComplete(groups);
        }
        return result;
    }

    /**
     * The deadline {@code timeout} after the submit's start: on the system clock one reading
     * ({@code startNanos}, {@link System#nanoTime()}) times the action and starts its deadline;
     * a test's clock is read on its own.
     */
    private Deadline deadline(Duration timeout, long startNanos) {
        return Deadline.after(timeout, clock, clock == NanoClock.SYSTEM ? startNanos : clock.nanoTime());
    }

    /** What the finished groups did, from {@code startNanos} to {@code endNanos}. */
    RdmaResult result(ActionGroup groups, long startNanos, long endNanos) {
        List<String> names;
        if (groups.next == null) {
            names = singleNames.get(groups.rank); // immutable: the result keeps it without a copy
        } else {
            names = new ArrayList<>();
            for (ActionGroup g = groups; g != null; g = g.next) {
                names.add(g.transport.name());
            }
        }
        int ops = 0;
        long bytes = 0;
        for (ActionGroup g = groups; g != null; g = g.next) {
            ops += g.ops.size();
            bytes += g.bytes();
        }
        return new RdmaResult(names, ops, bytes, Duration.ofNanos(Math.max(0, endNanos - startNanos)));
    }

    /**
     * {@link #groups(List, Set)}, or the groups of {@code action}'s last submit when nothing they
     * depend on changed since: its ops and required transports (a change drops the plan), the
     * manager's registrations (the plan names their prepared local memory), and the local memory
     * the plan took from transports' caches (each entry taken again, once per action and entry;
     * one evicted meanwhile, or whose segment's arena closed, drops the plan). Then an op costs one
     * check that its local segment is alive, and nothing is allocated per op. The plan is made at
     * an action's second routing, so that actions submitted once do not pay for it.
     */
    private ActionGroup groups(RdmaAction action, List<RdmaAction.Op> ops, Set<String> required) {
        long releases = table.releases();
        Plan plan = action.plan;
        if (plan != null && plan.required == required && plan.releases == releases) {
            ActionGroup kept = plan.groups();
            if (kept != null) {
                return kept;
            }
            action.plan = null;     // its cached local memory left the cache: route afresh
        }
        ActionGroup head = groups(ops, required);
        if (action.routedBefore) {      // an action submitted once only (most made by read/write) keeps no plan
            action.plan = Plan.of(head, required, releases);
        }
        action.routedBefore = true;
        return head;
    }

    /**
     * An action's routed, sealed ops per transport, kept in the action for its next submit, with
     * the local memory they took from transports' caches: each such entry is held for one submit
     * only, and taken again ({@link LocalMemoryCache#reacquire}) by the next submit of the plan.
     * The op lists are immutable and shared by the submits.
     */
    static final class Plan {
        private final Set<String> required;
        private final long releases;
        private final OpenTransport[] transports;
        private final int[] ranks;
        private final List<List<TransportOp>> ops;
        /** Per group, its counts as sealed ({@link ActionGroup#counts()}): the plan keeps no group of a past submit. */
        private final long[][] counted;
        /** Per group, the distinct cache entries its ops' local memory came from, or null for none. */
        private final LocalMemoryCache.Entry[][] held;

        private Plan(Set<String> required, long releases, OpenTransport[] transports, int[] ranks,
                     List<List<TransportOp>> ops, long[][] counted, LocalMemoryCache.Entry[][] held) {
            this.required = required;
            this.releases = releases;
            this.transports = transports;
            this.ranks = ranks;
            this.ops = ops;
            this.counted = counted;
            this.held = held;
        }

        /** The plan of freshly built groups. */
        static Plan of(ActionGroup head, Set<String> required, long releases) {
            int n = 0;
            for (ActionGroup g = head; g != null; g = g.next) {
                n++;
            }
            OpenTransport[] transports = new OpenTransport[n];
            int[] ranks = new int[n];
            List<List<TransportOp>> ops = new ArrayList<>(n);
            long[][] counted = new long[n][];
            LocalMemoryCache.Entry[][] held = new LocalMemoryCache.Entry[n][];
            int i = 0;
            for (ActionGroup g = head; g != null; g = g.next, i++) {
                transports[i] = g.transport;
                ranks[i] = g.rank;
                ops.add(g.ops);
                counted[i] = g.counts();
                if (g.held != null) {
                    List<LocalMemoryCache.Entry> distinct = new ArrayList<>(1);
                    for (LocalMemoryCache.Entry e : g.held) {
                        if (!distinct.contains(e)) {        // identity: entries do not override equals
                            distinct.add(e);
                        }
                    }
                    held[i] = distinct.toArray(LocalMemoryCache.Entry[]::new);
                }
            }
            return new Plan(required, releases, transports, ranks, ops, counted, held);
        }

        /**
         * Fresh groups over the kept ops, each holding its cache entries again; null, holding
         * nothing, when an entry is no longer cached. Throws when a local segment's arena was closed since.
         */
        ActionGroup groups() {
            ActionGroup head = null;
            ActionGroup tail = null;
            try {
                for (int i = 0; i < transports.length; i++) {
                    List<TransportOp> list = ops.get(i);
                    for (int j = 0, n = list.size(); j < n; j++) {
                        if (!list.get(j).local().scope().isAlive()) {
                            throw new IllegalStateException("the arena of a local segment was closed before submit");
                        }
                    }
                    ActionGroup g = new ActionGroup(transports[i], ranks[i], list, counted[i]);
                    if (tail == null) {
                        head = g;
                    } else {
                        tail.next = g;
                    }
                    tail = g;
                    LocalMemoryCache.Entry[] entries = held[i];
                    if (entries != null) {
                        LocalMemoryCache cache = transports[i].local();
                        for (LocalMemoryCache.Entry e : entries) {
                            if (!cache.reacquire(e)) {
                                releaseAll(head);
                                return null;
                            }
                            g.hold(e);
                        }
                    }
                }
                return head;
            } catch (RuntimeException | Error e) {
                releaseAll(head);
                throw e;
            }
        }

        private static void releaseAll(ActionGroup head) {
            for (ActionGroup g = head; g != null; g = g.next) {
                g.releaseHeld();
            }
        }
    }

    /**
     * Routes every op to its transport, in order, into one group per transport (linked in the
     * order the ops first used them); throws before anything is sent when one cannot go.
     */
    private ActionGroup groups(List<RdmaAction.Op> ops, Set<String> required) {
        ActionGroup head = null;
        ActionGroup tail = null;
        RdmaRemoteBuffer previousToken = null;  // ops on one token in a row take its route once
        Route previous = null;
        try {
            for (int i = 0, n = ops.size(); i < n; i++) {
                RdmaAction.Op op = ops.get(i);
                Route route;
                if (op.remote() == previousToken) {
                    route = previous;
                } else {
                    route = route(op.remote(), required);
                    previousToken = op.remote();
                    previous = route;
                }
                ActionGroup g = head;
                while (g != null && g.transport != route.transport) {
                    g = g.next;
                }
                if (g == null) {
                    g = new ActionGroup(route.transport, route.rank, n);
                    if (tail == null) {
                        head = g;
                    } else {
                        tail.next = g;
                    }
                    tail = g;
                }
                MemorySegment local = op.local();
                if (!local.scope().isAlive()) {
                    throw new IllegalStateException("the arena of a local segment was closed before submit");
                }
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL && local.byteSize() != op.remote().size()) {
                    local = local.asSlice(0, op.remote().size());
                }
                g.add(new TransportOp(op.type(), local, localMemory(g, local, op.type()), route.ref, route.decoded,
                        op.remote().offset()));
            }
            for (ActionGroup g = head; g != null; g = g.next) {
                g.seal();
            }
            if (required == null && previousToken != null) {
                LastRoute last = lastRoute;
                if (last == null || last.token != previousToken) {
                    lastRoute = new LastRoute(previousToken, previous); // the next action likely starts where this one ended
                }
            }
            return head;
        } catch (RuntimeException | Error e) {
            for (ActionGroup g = head; g != null; g = g.next) {
                g.releaseHeld();
            }
            throw e;
        }
    }

    /**
     * The prepared local memory for {@code local}: its registration's, or one from the cache. A
     * read-only registration's is not used for reads into {@code local} (it may lack local write
     * access: a verbs region of a read-only registration has none).
     */
    private LocalMemory localMemory(ActionGroup g, MemorySegment local, TransportOp.OpType type) {
        LocalMemoryCache cache = g.transport.local();
        if (cache == null) {
            return null;
        }
        Registration r = table.containing(local);
        LocalMemory registered = r == null || r.readOnly() && type == TransportOp.OpType.READ_INTO_LOCAL ? null
                : r.localMemory(g.transport.name());
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

    ManagerStats stats() {
        return stats;
    }
}
