package io.rdma4j;

import io.rdma4j.internal.LocalMemoryCache;
import io.rdma4j.spi.TransportOp;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

/**
 * An action's ops for one transport, and the cached local memory they hold. An action's groups
 * form a list through {@link #next}, in the order the ops first used them.
 */
final class ActionGroup implements BiConsumer<Object, Throwable> {

    /**
     * Asks whether action events are recorded: {@link jdk.jfr.Event#isEnabled()} reads the event
     * type's setting, not the instance, so one shared instance answers for all and no event object
     * is allocated per action while recording is off.
     */
    private static final RdmaEvents.Action EVENTS = new RdmaEvents.Action();

    final OpenTransport transport;
    final int rank;
    final int maxOps;
    /** The ops, once {@link #seal()}ed: immutable, so a transport may keep it without a copy. */
    List<TransportOp> ops;
    private TransportOp first;
    private List<TransportOp> more;
    /** The next group of the action, or {@code null}. */
    ActionGroup next;
    /** Local memory taken from the transport's cache for these ops; {@code null} until the first. */
    List<LocalMemoryCache.Entry> held;
    /** The sealed ops' counts and bytes by type, counted once when they are fixed: the stats and the result read them per action. */
    long readOps;
    long readBytes;
    long writeOps;
    long writeBytes;
    volatile CompletableFuture<Void> running;
    /** The action's future, which this group (the first one) completes when the group's future does. */
    ActionFuture action;
    long startNanos;
    RdmaEvents.Action event;

    ActionGroup(OpenTransport transport, int rank, int maxOps) {
        this.transport = transport;
        this.rank = rank;
        this.maxOps = maxOps;
    }

    /**
     * A group of ops routed before ({@link Dispatcher.Plan}), already sealed, with the counts
     * {@link #counts()} gave when they were sealed.
     */
    ActionGroup(OpenTransport transport, int rank, List<TransportOp> sealed, long[] counts) {
        this(transport, rank, sealed.size());
        this.ops = sealed;
        this.readOps = counts[0];
        this.readBytes = counts[1];
        this.writeOps = counts[2];
        this.writeBytes = counts[3];
    }

    /** The sealed ops' counts (read ops, read bytes, write ops, write bytes), for a plan to keep. */
    long[] counts() {
        return new long[] {readOps, readBytes, writeOps, writeBytes};
    }

    void add(TransportOp op) {
        if (first == null) {
            first = op;
            return;
        }
        if (more == null) {
            more = new ArrayList<>(Math.min(maxOps, 16));
            more.add(first);
        }
        more.add(op);
    }

    /** Fixes the ops list; no op is added afterwards. */
    void seal() {
        ops = more == null ? List.of(first) : List.copyOf(more);
        for (int i = 0, n = ops.size(); i < n; i++) {
            TransportOp op = ops.get(i);
            if (op.type() == TransportOp.OpType.READ_INTO_LOCAL) {
                readOps++;
                readBytes += op.length();
            } else {
                writeOps++;
                writeBytes += op.length();
            }
        }
    }

    /** The ops' bytes, read and written. */
    long bytes() {
        return readBytes + writeBytes;
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
        stats.group(rank, readOps, readBytes, writeOps, writeBytes, endNanos - startNanos, failure != null);
        RdmaEvents.Action e = event;
        if (e != null && e.shouldCommit()) {
            e.transport = transport.name();
            e.ops = ops.size();
            e.bytes = bytes();
            e.reads = (int) readOps;
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

    /** The transports' futures all completed (this one, or the {@code allOf} of the action's): ends the action. */
    @Override
    public void accept(Object ignored, Throwable alsoIgnored) {
        action.finish();
    }
}
