package io.rdma4j.transport.ibverbs.liveness;

import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.Watchdog;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The rounds of one liveness sweep ({@link OwnerSweep}, {@link HolderSweep}), on the manager's
 * {@link Watchdog}: a round starts its probes, all at once, each bounded by the probe wait (the
 * interval, at most {@link #MAX_PROBE_WAIT}), and the next round is planned one interval after the
 * last probe of this one ended, while the sweep still has peers to ask. Nothing is planned before
 * {@link #plan}. {@link #close} stops planning and waits for nothing: probes under way end by their
 * deadline.
 *
 * <p>Thread-safe.
 */
final class SweepRounds implements AutoCloseable {

    /** The longest a probe waits for its answer; shorter when the interval is. */
    static final Duration MAX_PROBE_WAIT = Duration.ofSeconds(5);

    private final TransportContext context;
    private final long intervalNanos;
    private final Duration probeWait;
    private final Supplier<List<CompletableFuture<?>>> round;
    private final BooleanSupplier peersLeft;
    /** The planned round, or null; guarded by {@code this}. */
    private Watchdog.Guard next;
    /** A round's probes are under way (or its next round is being planned); guarded by {@code this}. */
    private boolean sweeping;
    private boolean closed;
    /** Rounds whose probes all ended; guarded by {@code this}. */
    private long ended;

    /**
     * @param interval  time between rounds; {@link Duration#ZERO} turns the sweep off
     * @param round     starts one round's probes and returns them (run on the watchdog's thread)
     * @param peersLeft whether there is anyone to ask in a next round
     */
    SweepRounds(TransportContext context, Duration interval, Supplier<List<CompletableFuture<?>>> round,
                BooleanSupplier peersLeft) {
        this.context = context;
        this.intervalNanos = interval.toNanos();
        this.probeWait = interval.compareTo(MAX_PROBE_WAIT) < 0 ? interval : MAX_PROBE_WAIT;
        this.round = round;
        this.peersLeft = peersLeft;
    }

    /**
     * Plans a round one interval from now, unless one is planned or under way.
     *
     * @return false, planning nothing, when the sweep is off or closed
     */
    synchronized boolean plan() {
        if (intervalNanos == 0 || closed) {
            return false;
        }
        if (next == null && !sweeping) {
            next = context.watchdog().arm(intervalNanos, this::round);
        }
        return true;
    }

    /**
     * Asks the manager at {@code peer} whether it is {@code incarnation} ({@link VerbsWire.Probe}),
     * within the probe wait.
     *
     * @return its answer; failed (never thrown) when it cannot be asked or does not answer in time
     */
    CompletableFuture<byte[]> probe(Endpoint peer, String incarnation) {
        try {
            return context.control().request(peer, new VerbsWire.Probe(incarnation).encode(),
                    Deadline.after(probeWait, context.clock()));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void round() {
        synchronized (this) {
            if (closed || sweeping) {       // sweeping: fired at once by a closed watchdog while the next round was planned
                return;
            }
            next = null;
            sweeping = true;
        }
        CompletableFuture<?>[] probes = new CompletableFuture<?>[0];
        try {
            probes = round.get().toArray(CompletableFuture<?>[]::new);
        } finally {
            CompletableFuture.allOf(probes).whenComplete((ok, t) -> roundEnded());
        }
    }

    private synchronized void roundEnded() {
        ended++;
        if (!closed && peersLeft.getAsBoolean()) {
            next = context.watchdog().arm(intervalNanos, this::round);
        }
        sweeping = false;
    }

    /** Rounds whose probes all ended so far (for tests). */
    synchronized long roundsEnded() {
        return ended;
    }

    /** Stops planning rounds; waits for nothing. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        if (next != null) {
            next.disarm();
            next = null;
        }
    }
}
