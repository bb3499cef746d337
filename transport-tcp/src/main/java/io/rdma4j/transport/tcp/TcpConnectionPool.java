package io.rdma4j.transport.tcp;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Connections to peers' data endpoints, reused across transfers.
 *
 * <p>A connection is either <em>idle</em> (in a Caffeine cache keyed by the peer's data endpoint,
 * at most {@code maxIdlePerPeer} per peer) or <em>checked out</em> by exactly one transfer worker.
 * A peer's idle connections are closed together when the peer went unused for the idle timeout
 * (Caffeine's removal listener closes them). A connection that failed or timed out is
 * {@link #discard discarded}, never given back. {@link #close()} closes idle and checked-out
 * connections alike, waking any worker blocked on one.
 *
 * <p>Thread-safe. The per-peer deques are only touched inside the cache's atomic compute
 * operations, or after the cache removed them.
 */
final class TcpConnectionPool implements AutoCloseable {

    private final Cache<Endpoint, IdleConnections> idle;
    private final Set<TcpConnection> checkedOut = ConcurrentHashMap.newKeySet();
    private final int maxIdlePerPeer;
    private final AtomicLong opened = new AtomicLong();
    private volatile boolean closed;

    TcpConnectionPool(Duration idleTimeout, int maxIdlePerPeer, Ticker ticker, Scheduler scheduler) {
        this(idleTimeout, maxIdlePerPeer, ticker, scheduler, peer -> { });
    }

    /**
     * @param peerForgotten told a peer's data endpoint once its idle connections were dropped (it
     *                      went unused for the idle timeout, or the pool closed); runs on the thread
     *                      that dropped them
     */
    TcpConnectionPool(Duration idleTimeout, int maxIdlePerPeer, Ticker ticker, Scheduler scheduler,
                      Consumer<Endpoint> peerForgotten) {
        this.maxIdlePerPeer = maxIdlePerPeer;
        this.idle = Caffeine.newBuilder()
                .expireAfterAccess(idleTimeout)
                .ticker(ticker)
                .scheduler(scheduler)
                .executor(Runnable::run)
                .removalListener((Endpoint peer, IdleConnections connections, RemovalCause cause) -> {
                    if (connections != null && cause != RemovalCause.REPLACED) {
                        connections.closeAll();
                    }
                    if (peer != null && cause != RemovalCause.REPLACED) {
                        peerForgotten.accept(peer);
                    }
                })
                .build();
    }

    /**
     * Checks out a connection to {@code peer}: an idle one when {@code mayReuse} and one is
     * there, else a new one connected before {@code deadline}.
     *
     * @throws ClosedChannelException when the pool is closed
     * @throws IOException            when connecting fails (see {@link TcpConnection#connect})
     */
    TcpConnection acquire(Endpoint peer, Deadline deadline, boolean mayReuse) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        TcpConnection c = mayReuse ? takeIdle(peer) : null;
        if (c == null) {
            c = TcpConnection.connect(peer, deadline);
            opened.incrementAndGet();
        } else {
            c.markReused();
        }
        checkedOut.add(c);
        if (closed) { // close() may have missed it: it reads checkedOut after setting closed
            discard(c);
            throw new ClosedChannelException();
        }
        return c;
    }

    private TcpConnection takeIdle(Endpoint peer) {
        // A read of the cache (it notes the access, so the peer's entry does not expire while in
        // use), not a compute: no lock of the cache's map per transfer. A deque the cache removed
        // meanwhile is empty (its connections were closed and taken out) or, when taken from just
        // before, gives a connection that is simply checked out now.
        // An emptied deque stays in the cache: removing and re-adding the peer's entry on every
        // transfer would make Caffeine re-plan its expiry timer (a thread wake-up) each time.
        IdleConnections connections = idle.getIfPresent(peer);
        return connections == null ? null : connections.poll();
    }

    /** Returns a healthy connection after a transfer; it is closed instead if it cannot be kept. */
    void giveBack(TcpConnection c) {
        checkedOut.remove(c);
        if (closed || !c.isOpen() || c.isExpired()) {
            c.close();
            return;
        }
        IdleConnections current = idle.getIfPresent(c.peer());
        int kept = current == null ? IdleConnections.RETIRED : current.offer(c, maxIdlePerPeer);
        if (kept == IdleConnections.RETIRED) {
            // No deque for the peer, or the cache removed it (and closed what it held): a new one.
            int[] result = new int[1];
            idle.asMap().compute(c.peer(), (p, connections) -> {
                IdleConnections q = connections == null || connections.isRetired() ? new IdleConnections() : connections;
                result[0] = q.offer(c, maxIdlePerPeer);
                return q;
            });
            kept = result[0];
        }
        if (kept != IdleConnections.KEPT) {
            c.close();
        } else if (closed) {
            idle.invalidateAll(); // lost a race with close(): close what was just added
        }
    }

    /** Closes a connection that failed, timed out or whose state is unknown. */
    void discard(TcpConnection c) {
        if (c != null) {
            checkedOut.remove(c);
            c.close();
        }
    }

    /** Idle connections to {@code peer}. */
    int idleCount(Endpoint peer) {
        IdleConnections q = idle.getIfPresent(peer);
        return q == null ? 0 : q.size();
    }

    /** Idle connections to every peer. */
    int idleCount() {
        return idle.asMap().values().stream().mapToInt(IdleConnections::size).sum();
    }

    /** Connections some transfer holds now. */
    int checkedOutCount() {
        return checkedOut.size();
    }

    /** Connections opened since the pool was created. */
    long openedCount() {
        return opened.get();
    }

    /** Runs pending expiry now (tests, with a fake ticker). */
    void cleanUp() {
        idle.cleanUp();
    }

    /** Closes every connection, idle or checked out; later acquires fail. Idempotent. */
    @Override
    public void close() {
        closed = true;
        idle.invalidateAll();
        idle.cleanUp();
        for (TcpConnection c : checkedOut) {
            c.close();
        }
    }

    /**
     * One peer's idle connections, most recently returned first. Once the cache removed it, it
     * is retired: it closed what it held and takes nothing more.
     */
    private static final class IdleConnections {
        static final int KEPT = 0;
        static final int FULL = 1;
        static final int RETIRED = 2;

        private final ArrayDeque<TcpConnection> deque = new ArrayDeque<>();
        private boolean retired;

        synchronized TcpConnection poll() {
            return deque.pollFirst();
        }

        /** Keeps {@code c} unless {@code max} are kept already or this was retired; says which. */
        synchronized int offer(TcpConnection c, int max) {
            if (retired) {
                return RETIRED;
            }
            if (deque.size() >= max) {
                return FULL;
            }
            deque.addFirst(c);
            return KEPT;
        }

        synchronized boolean isRetired() {
            return retired;
        }

        synchronized int size() {
            return deque.size();
        }

        synchronized boolean isEmpty() {
            return deque.isEmpty();
        }

        synchronized void closeAll() {
            retired = true;
            TcpConnection c;
            while ((c = deque.pollFirst()) != null) {
                c.close();
            }
        }
    }
}
