package io.rdma4j;

import io.rdma4j.spi.TransportOp.OpType;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * A manager's counters: nothing allocated per op, read only by {@link #snapshot}. A finished
 * group of ops updates its counters under one compare-and-set: each (transport, op type) cell is
 * split into stripes, a thread updates the stripe its id picks (or the next free one) while holding
 * that stripe's lock word, and the snapshot takes each stripe's lock to read it. Registrations,
 * counted on one thread, use plain adders.
 */
final class ManagerStats {

    private static final OpType[] TYPES = OpType.values();
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(long[].class);
    /** A stripe's slots: its lock word, then its counters. */
    private static final int LOCK = 0;
    private static final int OPS = 1;
    private static final int BYTES = 2;
    private static final int ERRORS = 3;
    private static final int GROUPS = 4;
    private static final int NANOS = 5;
    private static final int MAX_NANOS = 6;
    /** Longs per stripe: 128 bytes, so that no two stripes share a cache line. */
    private static final int WIDTH = 16;
    /** Stripes per cell: a power of two, at least twice the processors (at most 64). */
    private static final int STRIPES = Math.min(64, Integer.highestOneBit(Math.max(2, 2 * Runtime.getRuntime().availableProcessors() - 1)) << 1);

    private final List<String> transports;
    /** Per transport rank and op type, its stripes. */
    private final long[][][][] cells;
    final LongAdder registrations = new LongAdder();
    final LongAdder registrationFailures = new LongAdder();
    final LongAdder releases = new LongAdder();

    ManagerStats(List<String> transports) {
        this.transports = List.copyOf(transports);
        this.cells = new long[transports.size()][TYPES.length][STRIPES][WIDTH];
    }

    /**
     * Counts one finished group of ops on transport number {@code transport} (its rank), its ops
     * and bytes counted by the caller (an action's group counts them once, when its ops are fixed).
     *
     * @param nanos how long the group took
     */
    void group(int transport, long readOps, long readBytes, long writeOps, long writeBytes, long nanos, boolean failed) {
        long[][][] row = cells[transport];
        count(row[OpType.READ_INTO_LOCAL.ordinal()], readOps, readBytes, nanos, failed);
        count(row[OpType.WRITE_FROM_LOCAL.ordinal()], writeOps, writeBytes, nanos, failed);
    }

    private static void count(long[][] stripes, long ops, long bytes, long nanos, boolean failed) {
        if (ops == 0) {
            return;
        }
        long[] s = lockFree(stripes);
        s[OPS] += ops;
        s[BYTES] += bytes;
        if (failed) {
            s[ERRORS] += ops;
        }
        s[GROUPS]++;
        s[NANOS] += nanos;
        if (nanos > s[MAX_NANOS]) {
            s[MAX_NANOS] = nanos;
        }
        SLOT.setRelease(s, LOCK, 0L);
    }

    /** Locks the calling thread's stripe, or the next one that is free. */
    private static long[] lockFree(long[][] stripes) {
        long id = Thread.currentThread().threadId();
        int i = (int) ((id * 0x9E3779B97F4A7C15L) >>> 58) & (STRIPES - 1);
        while (true) {
            long[] s = stripes[i];
            if ((long) SLOT.getOpaque(s, LOCK) == 0 && SLOT.compareAndSet(s, LOCK, 0L, 1L)) {
                return s;
            }
            i = (i + 1) & (STRIPES - 1);
            Thread.onSpinWait();
        }
    }

    /** Locks {@code s}, waiting for the thread that holds it (a few counter updates). */
    private static void lock(long[] s) {
        while (!SLOT.compareAndSet(s, LOCK, 0L, 1L)) {
            Thread.onSpinWait();
        }
    }

    RdmaStats snapshot(int registeredBuffers, int ringPending, int ringCapacity) {
        List<RdmaStats.OpStats> ops = new ArrayList<>();
        for (int t = 0; t < cells.length; t++) {
            for (OpType type : TYPES) {
                long[] sum = new long[WIDTH];
                for (long[] s : cells[t][type.ordinal()]) {
                    lock(s);
                    for (int k = OPS; k < MAX_NANOS; k++) {
                        sum[k] += s[k];
                    }
                    sum[MAX_NANOS] = Math.max(sum[MAX_NANOS], s[MAX_NANOS]);
                    SLOT.setRelease(s, LOCK, 0L);
                }
                long groups = sum[GROUPS];
                if (groups == 0) {
                    continue;
                }
                ops.add(new RdmaStats.OpStats(transports.get(t), type, sum[OPS], sum[BYTES], sum[ERRORS], groups,
                        Duration.ofNanos(sum[NANOS] / groups), Duration.ofNanos(sum[MAX_NANOS])));
            }
        }
        return new RdmaStats(ops, registrations.sum(), registrationFailures.sum(), releases.sum(), registeredBuffers,
                ringPending, ringCapacity);
    }
}
