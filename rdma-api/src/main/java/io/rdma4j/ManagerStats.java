package io.rdma4j;

import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.TransportOp.OpType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/**
 * A manager's counters: striped adders, no locks, nothing allocated per op; read only by
 * {@link #snapshot}.
 */
final class ManagerStats {

    private static final OpType[] TYPES = OpType.values();

    /** The counters of one op type on one transport. */
    private static final class Cell {
        /** Ops beyond the first of each group: a group of one op, the common case, adds nothing here. */
        final LongAdder extraOps = new LongAdder();
        final LongAdder bytes = new LongAdder();
        final LongAdder errors = new LongAdder();
        final LongAdder groups = new LongAdder();
        final LongAdder nanos = new LongAdder();
        final LongAccumulator maxNanos = new LongAccumulator(Math::max, 0);
    }

    private final List<String> transports;
    private final Cell[][] cells;
    final LongAdder registrations = new LongAdder();
    final LongAdder registrationFailures = new LongAdder();
    final LongAdder releases = new LongAdder();

    ManagerStats(List<String> transports) {
        this.transports = List.copyOf(transports);
        this.cells = new Cell[transports.size()][TYPES.length];
        for (Cell[] row : cells) {
            for (int i = 0; i < row.length; i++) {
                row[i] = new Cell();
            }
        }
    }

    /**
     * Counts one finished group of ops on transport number {@code transport} (its rank).
     *
     * @param nanos how long the group took
     */
    void group(int transport, List<TransportOp> ops, long nanos, boolean failed) {
        Cell[] row = cells[transport];
        long readOps = 0;
        long readBytes = 0;
        long writeOps = 0;
        long writeBytes = 0;
        for (int i = 0, n = ops.size(); i < n; i++) {
            TransportOp op = ops.get(i);
            if (op.type() == OpType.READ_INTO_LOCAL) {
                readOps++;
                readBytes += op.length();
            } else {
                writeOps++;
                writeBytes += op.length();
            }
        }
        count(row[OpType.READ_INTO_LOCAL.ordinal()], readOps, readBytes, nanos, failed);
        count(row[OpType.WRITE_FROM_LOCAL.ordinal()], writeOps, writeBytes, nanos, failed);
    }

    private static void count(Cell c, long ops, long bytes, long nanos, boolean failed) {
        if (ops == 0) {
            return;
        }
        if (ops > 1) {
            c.extraOps.add(ops - 1);
        }
        c.bytes.add(bytes);
        if (failed) {
            c.errors.add(ops);
        }
        c.groups.increment();
        c.nanos.add(nanos);
        c.maxNanos.accumulate(nanos);
    }

    RdmaStats snapshot(int registeredBuffers, int ringPending, int ringCapacity) {
        List<RdmaStats.OpStats> ops = new ArrayList<>();
        for (int t = 0; t < cells.length; t++) {
            for (OpType type : TYPES) {
                Cell c = cells[t][type.ordinal()];
                long groups = c.groups.sum();
                if (groups == 0) {
                    continue;
                }
                ops.add(new RdmaStats.OpStats(transports.get(t), type, groups + c.extraOps.sum(), c.bytes.sum(), c.errors.sum(), groups,
                        Duration.ofNanos(c.nanos.sum() / groups), Duration.ofNanos(c.maxNanos.get())));
            }
        }
        return new RdmaStats(ops, registrations.sum(), registrationFailures.sum(), releases.sum(), registeredBuffers,
                ringPending, ringCapacity);
    }
}
