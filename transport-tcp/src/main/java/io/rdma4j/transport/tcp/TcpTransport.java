package io.rdma4j.transport.tcp;

import com.github.benmanes.caffeine.cache.Scheduler;
import com.github.benmanes.caffeine.cache.Ticker;
import io.rdma4j.spi.Watchdog;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportException.Kind;
import io.rdma4j.spi.Registered;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.lang.foreign.MemorySegment;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The TCP transport serving one manager: a data endpoint for peers' requests, and a pool of
 * connections for this side's transfers. See the package documentation for the threads.
 *
 * <p><b>Submits.</b> The ops of one {@link #submit} run one after another on a pool thread; the
 * first failing op fails the submit and later ops are not attempted (as in the reference). Each op
 * is cut into chunks of {@code rdma.tcp.maxChunkMiB}; with {@code rdma.tcp.parallelism} N > 1 the
 * chunks are shared out among up to N connections working concurrently. Every blocking socket
 * call is bounded by the submit's deadline (a watchdog closes the connection when it passes).
 */
final class TcpTransport implements Transport {

    private static final System.Logger LOG = System.getLogger(TcpTransport.class.getName());
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private final Endpoint dataEndpoint;
    private final byte[] context;
    private final long chunkBytes;
    private final int parallelism;
    private final Duration idleTimeout;
    private final TcpThreads threads = new TcpThreads();
    private final Watchdog watchdog;
    private final TcpDataServer server;
    private final TcpConnectionPool pool;
    private final Set<TcpSubmission> inFlight = ConcurrentHashMap.newKeySet();
    /** Per peer ever sent a pipelined run: its runs in progress and its shared connection. */
    private final ConcurrentHashMap<Endpoint, TcpMux.Lane> lanes = new ConcurrentHashMap<>();
    private final AtomicLong submitSeq = new AtomicLong();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final TcpSubmission.Work runHere = this::runHere;
    private final TcpStarter starter = new TcpStarter(threads, this::startOnPool);
    private volatile boolean closing;

    private TcpTransport(TransportContext context) throws IOException {
        Settings settings = context.settings();
        this.chunkBytes = (long) settings.get(TcpSettings.MAX_CHUNK_MIB) << 20;
        this.parallelism = settings.get(TcpSettings.PARALLELISM);
        this.idleTimeout = settings.get(TcpSettings.IDLE_TIMEOUT);
        this.watchdog = context.watchdog();
        try {
            this.server = new TcpDataServer(context.bindHost(), settings.get(TcpSettings.DATA_PORT),
                    context.registrations(), watchdog, threads, idleTimeout);
        } catch (IOException | RuntimeException e) {
            throw new IOException("cannot bind the tcp data endpoint to " + context.bindHost() + ":"
                    + settings.get(TcpSettings.DATA_PORT) + " (rdma.bindHost / rdma.tcp.dataPort): " + e.getMessage(), e);
        }
        this.dataEndpoint = new Endpoint(context.advertisedHost(), server.port());
        this.context = TcpContextCodec.encode(dataEndpoint);
        this.pool = new TcpConnectionPool(idleTimeout, Math.max(8, 2 * parallelism), Ticker.systemTicker(),
                Scheduler.systemScheduler(), this::forgetLaneIfIdle);
    }

    /** Binds the data endpoint and starts serving it (the constructor only binds: it starts no thread). */
    static TcpTransport open(TransportContext context) throws IOException {
        TcpTransport backend = new TcpTransport(context);
        try {
            backend.server.start();
        } catch (RuntimeException | Error e) {
            backend.close(); // the endpoint was bound: unbind it
            throw e;
        }
        LOG.log(Level.DEBUG, () -> "tcp transport serving on " + backend.dataEndpoint + " (chunk "
                + (backend.chunkBytes >> 20) + " MiB, parallelism " + backend.parallelism + ")");
        return backend;
    }

    @Override
    public String name() {
        return TcpTransportProvider.NAME;
    }

    /**
     * Returns the data endpoint's context; the transport keeps no per-buffer state (requests look
     * buffers up through the manager's registrations).
     *
     * @throws IllegalStateException when the backend is closed
     */
    @Override
    public Registered register(long bufferId, MemorySegment segment) {
        if (closing) {
            throw new IllegalStateException("tcp transport is closed");
        }
        return Registered.context(context);
    }

    /** The peer's data endpoint and the request fields of one token, decoded once per token. */
    record Target(Endpoint peer, long bufferId, byte[] accessKey, byte[] incarnation) {
    }

    /**
     * Decodes the token's tcp context and the request fields once.
     *
     * @throws TransportException of kind {@link Kind#PROTOCOL} when the context is malformed
     */
    @Override
    public Target decodeContext(RemoteBufferRef remote) {
        Endpoint peer;
        try {
            peer = TcpContextCodec.decode(remote.context());
        } catch (IllegalArgumentException e) {
            throw new TransportException(Kind.PROTOCOL, "buffer " + remote.bufferId()
                    + ": the token's tcp context is malformed: " + e.getMessage(), e);
        }
        byte[] key = remote.accessKey();
        if (key.length != TcpProtocol.KEY_BYTES) {
            throw new TransportException(Kind.PROTOCOL, "buffer " + remote.bufferId() + ": access key must be "
                    + TcpProtocol.KEY_BYTES + " bytes, the token has " + key.length);
        }
        return new Target(peer, remote.bufferId(), key, HexFormat.of().parseHex(remote.incarnation()));
    }

    /** Nothing to do: the manager's registrations refuse released buffers. */
    @Override
    public void release(long bufferId) {
    }

    /**
     * Hands the ops to a pool thread and returns their future. The future implements
     * {@link io.rdma4j.spi.RunOnJoin}: a thread that is about to wait for it and calls
     * {@code runOnJoin()} first (the manager's {@code join()} does) runs the ops itself when the pool
     * thread has not started them yet, which saves waking that thread and being woken by it. When
     * the submitting thread joins its submits at once, no pool thread is woken unless nobody
     * claims the ops within a few hundred microseconds ({@link TcpStarter}).
     */
    @Override
    public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
        Objects.requireNonNull(deadline, "deadline");
        List<TransportOp> batch = List.copyOf(ops);
        if (closing) {
            return CompletableFuture.failedFuture(closedError());
        }
        if (batch.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        TcpSubmission result = new TcpSubmission(batch, deadline, deadline.remainingNanos(), runHere, parallelism);
        inFlight.add(result);
        if (closing) { // close() may have missed it: it reads inFlight after setting closing
            inFlight.remove(result);
            result.completeExceptionally(closedError());
            return result;
        }
        starter.start(result);
        return result;
    }

    /** Starts a submit's ops on a pool thread, which runs them unless another thread claimed them first. */
    private void startOnPool(TcpSubmission result) {
        if (result.isDone()) {
            return;
        }
        try {
            threads.start("rdma4j-tcp-submit-" + submitSeq.incrementAndGet(), () -> {
                if (result.claim()) {
                    runBatch(result);
                }
            }, failure -> {
                if (result.claimedBy(Thread.currentThread())) {
                    inFlight.remove(result);
                    result.finish(failure == null ? null : asTransportFailure(failure));
                }
            });
        } catch (RuntimeException | OutOfMemoryError e) {
            inFlight.remove(result);
            result.completeExceptionally(new TransportException(Kind.INTERNAL, "cannot start a tcp transfer thread: " + e, e));
        }
    }

    /**
     * Runs the ops on the calling thread: the same work as {@link #submit}, without handing it to a
     * pool thread and back. {@link #close()} fails it as it fails a submit.
     */
    @Override
    public void submitAndWait(List<TransportOp> ops, Deadline deadline) {
        Objects.requireNonNull(deadline, "deadline");
        List<TransportOp> batch = List.copyOf(ops);
        if (closing) {
            throw closedError();
        }
        if (batch.isEmpty()) {
            return;
        }
        TcpSubmission result = new TcpSubmission(batch, deadline, deadline.remainingNanos(), runHere, parallelism);
        inFlight.add(result);
        if (closing) {
            inFlight.remove(result);
            throw closedError();
        }
        result.runOnJoin(); // nobody else knows this future: the ops run here
        if (!result.isDone()) {
            throw closedError(); // only close() aborts it, and completes it once the exchanges ended
        }
        if (result.isCompletedExceptionally()) {
            throw (TransportException) result.exceptionNow(); // close() may have completed it first
        }
    }

    /** Runs a submit's ops on the calling thread, which claimed them, and completes its future. */
    private void runHere(TcpSubmission submission) {
        TransportException failure = null;
        try {
            runBatch(submission);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure = new TransportException(Kind.INTERNAL, "interrupted during a tcp transfer", e);
        } catch (Throwable t) {
            failure = asTransportFailure(t);
        } finally {
            inFlight.remove(submission);
        }
        submission.finish(failure);
    }

    private TransportException asTransportFailure(Throwable failure) {
        if (failure instanceof TransportException te) {
            return te;
        }
        if (closing) {
            return closedError();
        }
        return new TransportException(Kind.INTERNAL, "tcp transfer failed: " + failure, failure);
    }

    /**
     * Runs a submit's ops in order: a run of two or more small ops to one peer pipelined on one
     * connection ({@link TcpPipeline}), any other op as a transfer of its own ({@link TcpTransfer}).
     */
    private void runBatch(TcpSubmission submission) throws InterruptedException {
        List<TransportOp> batch = submission.ops();
        Deadline deadline = submission.deadline();
        long budgetNanos = submission.budgetNanos();
        int n = batch.size();
        Target[] targets = null;
        for (int i = 0; i < n; ) {
            TransportOp op = batch.get(i);
            Target target = target(op);
            int end = i + 1;
            if (n > 1 && TcpPipeline.fits(op)) {
                while (end < n && TcpPipeline.fits(batch.get(end)) && target(batch.get(end)).peer().equals(target.peer())) {
                    end++;
                }
            }
            if (end - i >= 2) {
                if (targets == null) {
                    targets = new Target[n];
                }
                for (int j = i; j < end; j++) {
                    targets[j] = target(batch.get(j));
                }
                new TcpPipeline(this, submission, targets).run(i, end);
            } else {
                String where = n == 1 ? "" : " (op " + (i + 1) + " of " + n + ")";
                boolean read = op.type() == TransportOp.OpType.READ_INTO_LOCAL;
                new TcpTransfer(this, op, read, target, deadline, budgetNanos, where, submission).run();
            }
            if (submission.isAborted()) {
                return;
            }
            i = end;
        }
    }

    private Target target(TransportOp op) {
        return op.remoteContext() instanceof Target t ? t : decodeContext(op.remote());
    }

    /**
     * Stops accepting, closes every connection (served and pooled, waking blocked threads), fails
     * in-flight submits with a {@link Kind#INTERNAL} error, and waits briefly for the transport's
     * threads to end. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closing = true;
        starter.close();
        server.close();
        pool.close();
        for (TcpSubmission f : inFlight) {
            f.abort(); // after it, nothing writes into the caller's memory
            f.completeExceptionally(closedError());
        }
        List<String> running = threads.awaitAll(CLOSE_WAIT);
        threads.shutdown();
        if (!running.isEmpty()) {
            LOG.log(Level.WARNING, "tcp transport on " + dataEndpoint + " closed, but " + running.size()
                    + " of its threads are still running after " + CLOSE_WAIT + ": " + running);
        }
    }

    // ------------------------------------------------------------------ for transfers

    long chunkBytes() {
        return chunkBytes;
    }

    int parallelism() {
        return parallelism;
    }

    /** {@code rdma.tcp.idleTimeout}: also how long a shared connection's helping writer may block in one write. */
    Duration idleTimeout() {
        return idleTimeout;
    }

    /**
     * Ends a transfer's use of {@code connection} (null: it had none): disarms its deadline guard,
     * and gives the connection back to the pool when {@code keep} says it is still in step and
     * neither the deadline nor closing touched it; otherwise closes it.
     */
    void endUse(TcpConnection connection, Watchdog.Guard guard, boolean keep) {
        boolean disarmed = guard == null || guard.disarm();
        if (connection != null) {
            if (keep && disarmed && !connection.isExpired() && !closing) {
                pool.giveBack(connection);
            } else {
                pool.discard(connection);
            }
        }
    }

    TcpThreads threads() {
        return threads;
    }

    Watchdog watchdog() {
        return watchdog;
    }

    /** Whether {@link #close()} began. */
    boolean isClosing() {
        return closing;
    }

    TransportException closedError() {
        return new TransportException(Kind.INTERNAL, "tcp transport on " + dataEndpoint
                + " was closed while the transfer was in flight (or before it started)");
    }

    // ------------------------------------------------------------------ for tests and diagnostics

    /** The data endpoint as advertised in tokens. */
    Endpoint dataEndpoint() {
        return dataEndpoint;
    }

    TcpConnectionPool pool() {
        return pool;
    }

    /** The peer's lane: its pipelined runs in progress and its shared connection. */
    TcpMux.Lane lane(Endpoint peer) {
        TcpMux.Lane lane = lanes.get(peer);
        return lane != null ? lane : lanes.computeIfAbsent(peer, p -> new TcpMux.Lane());
    }

    /**
     * Drops the peer's lane when no run to it is in progress and it has no shared connection: called
     * when its pooled connections expired and when its shared connection ended, so a peer no longer
     * used leaves nothing behind. A run that took the lane just before keeps using it; the next run
     * makes a new one (at worst two shared connections to the peer for a while).
     */
    void forgetLaneIfIdle(Endpoint peer) {
        lanes.computeIfPresent(peer, (p, lane) -> lane.active.get() == 0 && lane.mux == null ? null : lane);
    }

    /** Peers with a lane (tests). */
    int laneCount() {
        return lanes.size();
    }

    /** Rounds in flight on shared connections, all peers (tests). */
    int sharedRoundsInFlight() {
        int n = 0;
        for (TcpMux.Lane lane : lanes.values()) {
            TcpMux m = lane.mux;
            n += m == null ? 0 : m.outstanding();
        }
        return n;
    }

    /** The transport's tasks still running (acceptor, connections, transfers). */
    int liveThreadCount() {
        return threads.liveCount();
    }

    /** Connections the data endpoint is serving now. */
    int servedConnectionCount() {
        return server.connectionCount();
    }

    /** Whether the data endpoint's frame watch has a watchdog guard armed (tests). */
    boolean frameWatchArmed() {
        return server.frameWatchArmed();
    }

    @Override
    public String toString() {
        return "TcpTransport[" + dataEndpoint + (closing ? ", closed" : "") + "]";
    }

    static String format(Duration d) {
        long tensOfMillis = Math.round(d.toNanos() / 1e7);
        long millis = tensOfMillis * 10;
        if (millis < 1000) {
            return (millis < 10 ? d.toMillis() : millis) + "ms";
        }
        return BigDecimal.valueOf(millis, 3).stripTrailingZeros().toPlainString() + "s";
    }
}
