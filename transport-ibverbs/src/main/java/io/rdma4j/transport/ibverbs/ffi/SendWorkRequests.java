package io.rdma4j.transport.ibverbs.ffi;

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

    private SendWorkRequests(int capacity, int sgesPerRequest) {
        super(IBV_SEND_WR, capacity, sgesPerRequest);
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
