package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_WC;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A preallocated native array of completions ({@code struct ibv_wc[capacity]}) that
 * {@link CompletionQueue#poll} fills; the accessors read entry {@code i} in place and allocate
 * nothing. Owns its memory (a shared arena, freed by {@link #close()}). Not thread-safe: one
 * poller uses it at a time.
 */
public final class WorkCompletions implements AutoCloseable {

    private static final long SIZE = IBV_WC.byteSize();
    private static final long WR_ID = offset(IBV_WC, "wr_id");
    private static final long STATUS = offset(IBV_WC, "status");
    private static final long OPCODE = offset(IBV_WC, "opcode");
    private static final long VENDOR_ERR = offset(IBV_WC, "vendor_err");
    private static final long BYTE_LEN = offset(IBV_WC, "byte_len");
    private static final long QP_NUM = offset(IBV_WC, "qp_num");

    private static final String[] STATUS_TEXT = new String[Ibv.IBV_WC_TM_RNDV_INCOMPLETE + 1];

    private final Arena arena;
    private final MemorySegment array;
    private final int capacity;
    private final AtomicBoolean closed = new AtomicBoolean();

    private WorkCompletions(int capacity) {
        this.arena = Arena.ofShared();
        this.array = arena.allocate(IBV_WC, capacity);
        this.capacity = capacity;
    }

    /**
     * Allocates room for {@code capacity} completions.
     *
     * @param capacity the most one poll returns, at least 1
     * @return the array; the caller owns it and must close it
     * @throws IllegalArgumentException if {@code capacity < 1}
     */
    public static WorkCompletions allocate(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
        }
        return new WorkCompletions(capacity);
    }

    /**
     * How many completions fit.
     *
     * @return the capacity given at allocation
     */
    public int capacity() {
        return capacity;
    }

    /**
     * The work request id of entry {@code i}, as posted.
     *
     * @param i from 0 to capacity - 1
     * @return {@code wr_id}
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public long workRequestId(int i) {
        return array.get(JAVA_LONG, at(i) + WR_ID);
    }

    /**
     * The status of entry {@code i}: {@link Ibv#IBV_WC_SUCCESS} or an error such as
     * {@link Ibv#IBV_WC_REM_ACCESS_ERR}. Only {@link #workRequestId}, {@link #status} and
     * {@link #vendorError} are valid for a failed completion.
     *
     * @param i from 0 to capacity - 1
     * @return an {@code IBV_WC_*} status
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public int status(int i) {
        return array.get(JAVA_INT, at(i) + STATUS);
    }

    /**
     * The opcode of entry {@code i} ({@link Ibv#IBV_WC_RDMA_WRITE}, {@link Ibv#IBV_WC_RDMA_READ}, ...).
     *
     * @param i from 0 to capacity - 1
     * @return an {@code IBV_WC_*} opcode; valid only for a successful completion
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public int opcode(int i) {
        return array.get(JAVA_INT, at(i) + OPCODE);
    }

    /**
     * The bytes transferred by a receive or read (entry {@code i}).
     *
     * @param i from 0 to capacity - 1
     * @return {@code byte_len}
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public int byteLength(int i) {
        return array.get(JAVA_INT, at(i) + BYTE_LEN);
    }

    /**
     * The driver's own error code for entry {@code i}.
     *
     * @param i from 0 to capacity - 1
     * @return {@code vendor_err}
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public int vendorError(int i) {
        return array.get(JAVA_INT, at(i) + VENDOR_ERR);
    }

    /**
     * The local queue pair number of entry {@code i}.
     *
     * @param i from 0 to capacity - 1
     * @return {@code qp_num}
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public int queuePairNumber(int i) {
        return array.get(JAVA_INT, at(i) + QP_NUM);
    }

    /**
     * The text {@code ibv_wc_status_str} gives a status, cached so that it allocates nothing.
     *
     * @param status an {@code IBV_WC_*} status
     * @return e.g. "remote access error"; "unknown" for a value the library does not know
     */
    public static String statusText(int status) {
        if (status < 0 || status >= STATUS_TEXT.length) {
            return "unknown";
        }
        String text = STATUS_TEXT[status];
        if (text == null) {
            IbvFunctions.requireLibrary("ibv_wc_status_str");
            try {
                MemorySegment s = (MemorySegment) IbvFunctions.WC_STATUS_STR.invokeExact(status);
                text = s.address() == 0 ? "unknown" : s.reinterpret(256).getString(0);
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
            STATUS_TEXT[status] = text;     // racy but idempotent: every thread computes the same text
        }
        return text;
    }

    MemorySegment segment() {
        return array;
    }

    private long at(int i) {
        return Objects.checkIndex(i, capacity) * SIZE;
    }

    /** Frees the array. Idempotent. Must not race a poll into it. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            arena.close();
        }
    }
}
