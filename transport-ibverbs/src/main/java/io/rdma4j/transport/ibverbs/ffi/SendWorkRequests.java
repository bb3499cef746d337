package io.rdma4j.transport.ibverbs.ffi;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Objects;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_SEND_WR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Preallocated send work requests ({@code struct ibv_send_wr[capacity]}) for
 * {@link QueuePair#postSend}: fill requests 0 to n - 1 with the setters, then post n of them.
 * Setters write native memory in place and allocate nothing. Owns its memory; close it after the
 * last post whose requests may still be read (the driver copies them during the post call, so
 * right after {@code postSend} returns is fine).
 */
public final class SendWorkRequests extends WorkRequestArray {

    private static final long WR_ID = offset(IBV_SEND_WR, "wr_id");
    private static final long OPCODE = offset(IBV_SEND_WR, "opcode");
    private static final long SEND_FLAGS = offset(IBV_SEND_WR, "send_flags");
    private static final long IMM_DATA = offset(IBV_SEND_WR, "imm_data");
    private static final long REMOTE_ADDR = offset(IBV_SEND_WR, "wr", "rdma", "remote_addr");
    private static final long RKEY = offset(IBV_SEND_WR, "wr", "rdma", "rkey");

    /*
     * What setOne last wrote into request 0 and its entry 0, so that it writes only what changed:
     * under C1 each write goes through VarHandle adapters that only C2 inlines. Valid while
     * oneWritten; the other setters clear it when they write request 0.
     */
    private boolean oneWritten;
    private long oneId;
    private int oneOpcode;
    private int oneFlags;
    private long oneLocal;
    private int oneLength;
    private int oneLkey;
    private long oneRemote;
    private int oneRkey;

    /*
     * A heap copy of the requests and of their entries, which stage() writes with plain array
     * stores (C1 compiles each to a store, where a MemorySegment.set goes through VarHandle
     * adapters and checks that only C2 inlines: about a fifth of the posting thread's Java time in
     * the soft-RoCE VM), and writeStaged() copies to native memory in one bulk copy each. Null
     * on a big-endian platform: stage() then writes the native memory field by field.
     */
    private final long[] stagedRequests;
    private final long[] stagedSges;
    private final int longsPerRequest;
    private final int longsPerSgeBlock;

    private SendWorkRequests(int capacity, int sgesPerRequest) {
        super(IBV_SEND_WR, capacity, sgesPerRequest);
        boolean packable = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN && requestSize % Long.BYTES == 0
                && SGE_SIZE % Long.BYTES == 0;
        this.longsPerRequest = (int) (requestSize / Long.BYTES);
        this.longsPerSgeBlock = (int) (sgesPerRequest * SGE_SIZE / Long.BYTES);
        if (packable) {
            stagedRequests = new long[capacity * longsPerRequest];
            stagedSges = new long[capacity * longsPerSgeBlock];
            MemorySegment.copy(requests, JAVA_LONG, 0, stagedRequests, 0, stagedRequests.length);     // the links, the sg_list pointers
            MemorySegment.copy(sges, JAVA_LONG, 0, stagedSges, 0, stagedSges.length);
        } else {
            stagedRequests = null;
            stagedSges = null;
        }
    }

    /** Writes {@code value} at byte {@code offset} (a multiple of 4) of the little-endian longs of {@code a} from long {@code base}. */
    private static void putInt(long[] a, int base, long offset, int value) {
        int at = base + (int) (offset >>> 3);
        int shift = (int) (offset & 4) * 8;
        a[at] = (a[at] & ~(0xFFFF_FFFFL << shift)) | (Integer.toUnsignedLong(value) << shift);
    }

    /**
     * Stages request {@code i} as an RDMA operation on one contiguous local range (its entry 0),
     * as {@link #setSge setSge(i, 0, ...)} and {@link #setRdma(int, long, int, int, int, long,
     * int) setRdma(i, ..., 1, ...)} would, but into a heap copy that {@link #writeStaged} then
     * copies to the native requests at once. Stage every request from 0 to count - 1, then write
     * them, then post them; a request written with the other setters in between is overwritten.
     *
     * @param i             the request, from 0 to capacity - 1
     * @param workRequestId returned in the completion
     * @param opcode        {@link Ibv#IBV_WR_RDMA_WRITE} or {@link Ibv#IBV_WR_RDMA_READ}
     * @param sendFlags     e.g. {@link Ibv#IBV_SEND_SIGNALED}
     * @param localAddress  the first local byte
     * @param length        bytes
     * @param lkey          the {@link MemoryRegion#lkey()} covering the local bytes
     * @param remoteAddress the first remote byte
     * @param rkey          the remote region's key
     * @throws IndexOutOfBoundsException if {@code i} is out of range
     */
    public void stage(int i, long workRequestId, int opcode, int sendFlags, long localAddress, int length, int lkey,
                      long remoteAddress, int rkey) {
        if (stagedRequests == null) {
            setSge(i, 0, localAddress, length, lkey);
            setRdma(i, workRequestId, opcode, sendFlags, 1, remoteAddress, rkey);
            return;
        }
        long[] r = stagedRequests;
        int at = Objects.checkIndex(i, capacity()) * longsPerRequest;
        r[at + (int) (WR_ID >>> 3)] = workRequestId;
        putInt(r, at, numSgeOffset, 1);
        putInt(r, at, OPCODE, opcode);
        putInt(r, at, SEND_FLAGS, sendFlags);
        putInt(r, at, IMM_DATA, 0);
        r[at + (int) (REMOTE_ADDR >>> 3)] = remoteAddress;
        putInt(r, at, RKEY, rkey);
        long[] g = stagedSges;
        int sge = i * longsPerSgeBlock;
        g[sge + (int) (SGE_ADDR >>> 3)] = localAddress;
        putInt(g, sge, SGE_LENGTH, length);
        putInt(g, sge, SGE_LKEY, lkey);
    }

    /**
     * Copies requests 0 to {@code count - 1} staged by {@link #stage}, and their entries, to the
     * native requests, one bulk copy each; then post them.
     *
     * @throws IndexOutOfBoundsException if {@code count} is not within 1 and the capacity
     * @throws IllegalStateException if this array is closed
     */
    public void writeStaged(int count) {
        checkOpen();
        Objects.checkIndex(count - 1, capacity());
        if (stagedRequests == null) {
            return;     // stage() wrote in place
        }
        touched(0);
        MemorySegment.copy(stagedRequests, 0, requests, JAVA_LONG, 0, count * longsPerRequest);
        MemorySegment.copy(stagedSges, 0, sges, JAVA_LONG, 0, count * longsPerSgeBlock);
    }

    @Override
    void touched(int i) {
        if (i == 0) {
            oneWritten = false;
        }
    }

    /**
     * Fills request 0 as an RDMA operation on one contiguous local range (its entry 0), as
     * {@link #setSge setSge(0, 0, ...)} and {@link #setRdma(int, long, int, int, int, long, int)
     * setRdma(0, ..., 1, ...)} do, but writes only the fields that differ from what this method
     * wrote last: a connection that posts one request at a time mostly changes its id alone.
     *
     * @param workRequestId returned in the completion
     * @param opcode        {@link Ibv#IBV_WR_RDMA_WRITE} or {@link Ibv#IBV_WR_RDMA_READ}
     * @param sendFlags     e.g. {@link Ibv#IBV_SEND_SIGNALED}
     * @param localAddress  the first local byte
     * @param length        bytes
     * @param lkey          the {@link MemoryRegion#lkey()} covering the local bytes
     * @param remoteAddress the first remote byte
     * @param rkey          the remote region's key
     * @throws IllegalStateException if this array is closed
     */
    public void setOne(long workRequestId, int opcode, int sendFlags, long localAddress, int length, int lkey,
                       long remoteAddress, int rkey) {
        checkOpen();        // also when nothing changed, which writes nothing
        if (!oneWritten) {
            setSge(0, 0, localAddress, length, lkey);
            setRdma(0, workRequestId, opcode, sendFlags, 1, remoteAddress, rkey);
            oneWritten = true;
            oneId = workRequestId;
            oneOpcode = opcode;
            oneFlags = sendFlags;
            oneLocal = localAddress;
            oneLength = length;
            oneLkey = lkey;
            oneRemote = remoteAddress;
            oneRkey = rkey;
            return;
        }
        if (workRequestId != oneId) {
            requests.set(JAVA_LONG, WR_ID, oneId = workRequestId);
        }
        if (opcode != oneOpcode) {
            requests.set(JAVA_INT, OPCODE, oneOpcode = opcode);
        }
        if (sendFlags != oneFlags) {
            requests.set(JAVA_INT, SEND_FLAGS, oneFlags = sendFlags);
        }
        if (remoteAddress != oneRemote) {
            requests.set(JAVA_LONG, REMOTE_ADDR, oneRemote = remoteAddress);
        }
        if (rkey != oneRkey) {
            requests.set(JAVA_INT, RKEY, oneRkey = rkey);
        }
        if (localAddress != oneLocal || length != oneLength || lkey != oneLkey) {
            setSge(0, 0, oneLocal = localAddress, oneLength = length, oneLkey = lkey);
            oneWritten = true;      // setSge cleared it; the request's other fields still hold what is cached
        }
    }

    /**
     * Allocates {@code capacity} requests with room for {@code sgesPerRequest} scatter/gather
     * entries each.
     *
     * @param capacity       the most requests one post takes, at least 1
     * @param sgesPerRequest entries per request, at least 1 (at most the queue pair's max send SGEs)
     * @return the array; the caller owns it and must close it
     * @throws IllegalArgumentException if a count is below 1
     */
    public static SendWorkRequests allocate(int capacity, int sgesPerRequest) {
        return new SendWorkRequests(capacity, sgesPerRequest);
    }

    /**
     * Fills request {@code i} as an RDMA operation whose local side is its first
     * {@code sgeCount} entries (set them with {@link #setSge}).
     *
     * @param i             the request, from 0 to capacity - 1
     * @param workRequestId returned in the completion
     * @param opcode        {@link Ibv#IBV_WR_RDMA_WRITE} or {@link Ibv#IBV_WR_RDMA_READ}
     * @param sendFlags     e.g. {@link Ibv#IBV_SEND_SIGNALED} for a completion
     * @param sgeCount      entries used, from 0 to sgesPerRequest
     * @param remoteAddress the first remote byte
     * @param rkey          the remote region's key
     * @throws IndexOutOfBoundsException if {@code i} or {@code sgeCount} is out of range
     */
    public void setRdma(int i, long workRequestId, int opcode, int sendFlags, int sgeCount, long remoteAddress, int rkey) {
        long at = requestAt(i);
        touched(i);
        requests.set(JAVA_LONG, at + WR_ID, workRequestId);
        requests.set(JAVA_INT, at + numSgeOffset, checkSgeCount(sgeCount));
        requests.set(JAVA_INT, at + OPCODE, opcode);
        requests.set(JAVA_INT, at + SEND_FLAGS, sendFlags);
        requests.set(JAVA_INT, at + IMM_DATA, 0);
        requests.set(JAVA_LONG, at + REMOTE_ADDR, remoteAddress);
        requests.set(JAVA_INT, at + RKEY, rkey);
    }

    /**
     * Fills request {@code i} as an RDMA operation on one contiguous local range: entry 0 is
     * {@code length} bytes of {@code local} from {@code localOffset}.
     *
     * @param i             the request, from 0 to capacity - 1
     * @param workRequestId returned in the completion
     * @param opcode        {@link Ibv#IBV_WR_RDMA_WRITE} or {@link Ibv#IBV_WR_RDMA_READ}
     * @param sendFlags     e.g. {@link Ibv#IBV_SEND_SIGNALED}
     * @param local         the registered local memory
     * @param localOffset   where in it the range starts
     * @param length        bytes, at least 0
     * @param remoteAddress the first remote byte
     * @param rkey          the remote region's key
     * @throws IndexOutOfBoundsException if {@code i} is out of range, or the range is not inside {@code local}
     */
    public void setRdma(int i, long workRequestId, int opcode, int sendFlags, MemoryRegion local, long localOffset,
                        int length, long remoteAddress, int rkey) {
        java.util.Objects.checkFromIndexSize(localOffset, length, local.length());
        setSge(i, 0, local.address() + localOffset, length, local.lkey());
        setRdma(i, workRequestId, opcode, sendFlags, 1, remoteAddress, rkey);
    }
}
