package io.rdma4j.transport.ibverbs.ffi;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_RECV_WR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Preallocated receive work requests ({@code struct ibv_recv_wr[capacity]}) for
 * {@link QueuePair#postReceive}. Setters write native memory in place and allocate nothing. Owns
 * its memory.
 */
public final class ReceiveWorkRequests extends WorkRequestArray {

    private static final long WR_ID = offset(IBV_RECV_WR, "wr_id");

    private ReceiveWorkRequests(int capacity, int sgesPerRequest) {
        super(IBV_RECV_WR, capacity, sgesPerRequest);
    }

    /**
     * Allocates {@code capacity} requests with room for {@code sgesPerRequest} entries each.
     *
     * @param capacity       the most requests one post takes, at least 1
     * @param sgesPerRequest entries per request, at least 1
     * @return the array; the caller owns it and must close it
     * @throws IllegalArgumentException if a count is below 1
     */
    public static ReceiveWorkRequests allocate(int capacity, int sgesPerRequest) {
        return new ReceiveWorkRequests(capacity, sgesPerRequest);
    }

    /**
     * Fills request {@code i}: incoming data lands in its first {@code sgeCount} entries.
     *
     * @param i             the request, from 0 to capacity - 1
     * @param workRequestId returned in the completion
     * @param sgeCount      entries used, from 0 to sgesPerRequest
     * @throws IndexOutOfBoundsException if {@code i} or {@code sgeCount} is out of range
     */
    public void set(int i, long workRequestId, int sgeCount) {
        long at = requestAt(i);
        requests.set(JAVA_LONG, at + WR_ID, workRequestId);
        requests.set(JAVA_INT, at + numSgeOffset, checkSgeCount(sgeCount));
    }
}
