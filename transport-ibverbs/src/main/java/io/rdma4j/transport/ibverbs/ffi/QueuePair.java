package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_QP;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_QP_ATTR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_QP_INIT_ATTR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}). Owned by its {@link ProtectionDomain}.
 * Connect it with {@link #modifyToInit}, {@link #modifyToReadyToReceive} and
 * {@link #modifyToReadyToSend}; then {@link #postSend} and {@link #postReceive} hand preallocated
 * work requests to the device without allocating. Posting must be done by one thread at a time.
 */
public final class QueuePair implements AutoCloseable {

    private final ProtectionDomain pd;
    private final MemorySegment qp;
    private final MemorySegment postSendFunction;
    private final MemorySegment postRecvFunction;
    private final int number;
    private final int maxSendRequests;
    private final int maxReceiveRequests;
    private final int maxInlineData;
    private final AtomicBoolean closed = new AtomicBoolean();

    private QueuePair(ProtectionDomain pd, MemorySegment qp, int maxSendRequests, int maxReceiveRequests, int maxInlineData) {
        this.pd = pd;
        this.qp = qp;
        this.postSendFunction = pd.context().postSendFunction();
        this.postRecvFunction = pd.context().postRecvFunction();
        this.number = qp.get(JAVA_INT, offset(IBV_QP, "qp_num"));
        this.maxSendRequests = maxSendRequests;
        this.maxReceiveRequests = maxReceiveRequests;
        this.maxInlineData = maxInlineData;
    }

    static QueuePair create(ProtectionDomain pd, QueuePairInit init) {
        init.sendQueue().checkOpen();
        init.receiveQueue().checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment a = arena.allocate(IBV_QP_INIT_ATTR);
            a.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "send_cq"), init.sendQueue().pointer());
            a.set(ADDRESS, offset(IBV_QP_INIT_ATTR, "recv_cq"), init.receiveQueue().pointer());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_wr"), init.maxSendRequests());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_wr"), init.maxReceiveRequests());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_sge"), init.maxSendSges());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_sge"), init.maxReceiveSges());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_inline_data"), init.maxInlineData());
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "qp_type"), Ibv.IBV_QPT_RC);
            a.set(JAVA_INT, offset(IBV_QP_INIT_ATTR, "sq_sig_all"), 0);
            MemorySegment qp = (MemorySegment) IbvFunctions.CREATE_QP.invokeExact(state, pd.pointer(), a);
            qp = Calls.checkPointer("ibv_create_qp", qp, state, IBV_QP.byteSize());
            // ibv_create_qp writes back the capacities the driver actually gave
            return new QueuePair(pd, qp, a.get(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_send_wr")),
                    a.get(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_recv_wr")),
                    a.get(JAVA_INT, offset(IBV_QP_INIT_ATTR, "cap", "max_inline_data")));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The queue pair number the peer connects to ({@code qp_num}).
     *
     * @return 24-bit number
     */
    public int number() {
        return number;
    }

    /**
     * Send work requests that may be outstanding, as granted by the driver.
     *
     * @return at least the requested {@link QueuePairInit#maxSendRequests()}
     */
    public int maxSendRequests() {
        return maxSendRequests;
    }

    /**
     * Receive work requests that may be outstanding, as granted by the driver.
     *
     * @return at least the requested {@link QueuePairInit#maxReceiveRequests()}
     */
    public int maxReceiveRequests() {
        return maxReceiveRequests;
    }

    /**
     * Bytes a send work request may carry inline ({@link Ibv#IBV_SEND_INLINE}), as granted by the
     * driver: {@code ibv_create_qp} writes back what it gave, which may be more than asked for.
     *
     * @return at least the requested {@link QueuePairInit#maxInlineData()}
     */
    public int maxInlineData() {
        return maxInlineData;
    }

    /**
     * RESET -> INIT ({@code ibv_modify_qp} with state, pkey index, port and access flags).
     *
     * @param portNumber  the local port, from 1
     * @param pkeyIndex   partition key index, usually 0
     * @param accessFlags what the peer may do to memory through this queue pair ({@code IBV_ACCESS_REMOTE_*})
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this queue pair is closed
     */
    public void modifyToInit(int portNumber, int pkeyIndex, int accessFlags) {
        modify((a) -> {
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), Ibv.IBV_QPS_INIT);
            a.set(JAVA_SHORT, offset(IBV_QP_ATTR, "pkey_index"), (short) pkeyIndex);
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "port_num"), (byte) portNumber);
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_access_flags"), accessFlags);
        }, Ibv.IBV_QP_STATE | Ibv.IBV_QP_PKEY_INDEX | Ibv.IBV_QP_PORT | Ibv.IBV_QP_ACCESS_FLAGS, "INIT");
    }

    /**
     * INIT -> RTR ({@code ibv_modify_qp} with the address vector, path MTU, peer number, receive
     * PSN, max destination RD atomic and min RNR timer).
     *
     * @param rtr where the peer is
     * @throws IbverbsException if the call fails (e.g. errno 22 for an unreachable GID)
     * @throws IllegalStateException if this queue pair is closed
     */
    public void modifyToReadyToReceive(ReadyToReceive rtr) {
        modify((a) -> {
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), Ibv.IBV_QPS_RTR);
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "path_mtu"), rtr.pathMtu());
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "dest_qp_num"), rtr.destinationQpNumber());
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "rq_psn"), rtr.receivePsn());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_dest_rd_atomic"), (byte) rtr.maxDestinationRdAtomic());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "min_rnr_timer"), (byte) rtr.minRnrTimer());
            a.set(JAVA_SHORT, offset(IBV_QP_ATTR, "ah_attr", "dlid"), (short) rtr.destinationLid());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "port_num"), (byte) rtr.portNumber());
            if (rtr.destinationGid() != null) {
                a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "is_global"), (byte) 1);
                MemorySegment.copy(rtr.destinationGid().raw(), 0, a, JAVA_BYTE,
                        offset(IBV_QP_ATTR, "ah_attr", "grh", "dgid"), Gid.BYTES);
                a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "grh", "sgid_index"), (byte) rtr.sourceGidIndex());
                a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "ah_attr", "grh", "hop_limit"), (byte) rtr.hopLimit());
            }
        }, Ibv.IBV_QP_STATE | Ibv.IBV_QP_AV | Ibv.IBV_QP_PATH_MTU | Ibv.IBV_QP_DEST_QPN | Ibv.IBV_QP_RQ_PSN
                | Ibv.IBV_QP_MAX_DEST_RD_ATOMIC | Ibv.IBV_QP_MIN_RNR_TIMER, "RTR");
    }

    /**
     * RTR -> RTS ({@code ibv_modify_qp} with send PSN, timeout, retry counts and max RD atomic).
     *
     * @param rts this side's numbering and retries
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this queue pair is closed
     */
    public void modifyToReadyToSend(ReadyToSend rts) {
        modify((a) -> {
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), Ibv.IBV_QPS_RTS);
            a.set(JAVA_INT, offset(IBV_QP_ATTR, "sq_psn"), rts.sendPsn());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "timeout"), (byte) rts.timeout());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "retry_cnt"), (byte) rts.retryCount());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "rnr_retry"), (byte) rts.rnrRetry());
            a.set(JAVA_BYTE, offset(IBV_QP_ATTR, "max_rd_atomic"), (byte) rts.maxRdAtomic());
        }, Ibv.IBV_QP_STATE | Ibv.IBV_QP_SQ_PSN | Ibv.IBV_QP_TIMEOUT | Ibv.IBV_QP_RETRY_CNT | Ibv.IBV_QP_RNR_RETRY
                | Ibv.IBV_QP_MAX_QP_RD_ATOMIC, "RTS");
    }

    /**
     * Any state -> ERROR: outstanding work requests complete with {@link Ibv#IBV_WC_WR_FLUSH_ERR}.
     *
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this queue pair is closed
     */
    public void modifyToError() {
        modify((a) -> a.set(JAVA_INT, offset(IBV_QP_ATTR, "qp_state"), Ibv.IBV_QPS_ERR), Ibv.IBV_QP_STATE, "ERR");
    }

    /**
     * The current state, as the device reports it ({@code ibv_query_qp}). A queue pair whose work
     * request failed (e.g. a remote access error) is in {@link QueuePairState#ERROR}.
     *
     * @return the state
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this queue pair is closed
     */
    public QueuePairState state() {
        Calls.checkOpen(closed.get(), "queue pair " + number);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment a = arena.allocate(IBV_QP_ATTR);
            MemorySegment init = arena.allocate(IBV_QP_INIT_ATTR);
            Calls.check("ibv_query_qp", (int) IbvFunctions.QUERY_QP.invokeExact(state, qp, a, Ibv.IBV_QP_STATE, init), state);
            return QueuePairState.of(a.get(JAVA_INT, offset(IBV_QP_ATTR, "qp_state")));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Posts send work requests 0 to {@code count - 1} of {@code requests}, linked in that order
     * ({@code ibv_post_send}, called through the context's function table). Allocates nothing
     * when it succeeds.
     *
     * @param requests the filled requests
     * @param count    how many, from 1 to {@code requests.capacity()}
     * @throws IbverbsException if the driver refuses a request: the message names its index and
     *                          the errno (ENOMEM when the send queue is full); requests before it were posted
     *                          ({@link SendWorkRequests#refusedIndex()} tells how many)
     * @throws IndexOutOfBoundsException if {@code count} is out of range
     * @throws IllegalStateException if this queue pair or {@code requests} is closed
     */
    public void postSend(SendWorkRequests requests, int count) {
        if (closed.get()) {
            throw closedException();      // the message is built only when needed: posting allocates nothing
        }
        requests.terminateAt(count);
        int result;
        try {
            result = (int) IbvFunctions.POST_SEND.invokeExact(postSendFunction, qp, requests.segment(), requests.badRequest());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            requests.relink(count);
        }
        if (result != 0) {
            throw IbverbsException.failed("ibv_post_send", result, "queue pair " + number + ", work request "
                    + requests.badIndex() + " of " + count + " was not posted, nor were those after it");
        }
    }

    /**
     * Posts receive work requests 0 to {@code count - 1} of {@code requests}
     * ({@code ibv_post_recv}, called through the context's function table). Allocates nothing
     * when it succeeds.
     *
     * @param requests the filled requests
     * @param count    how many, from 1 to {@code requests.capacity()}
     * @throws IbverbsException if the driver refuses a request (the message names its index and the errno)
     * @throws IndexOutOfBoundsException if {@code count} is out of range
     * @throws IllegalStateException if this queue pair or {@code requests} is closed
     */
    public void postReceive(ReceiveWorkRequests requests, int count) {
        if (closed.get()) {
            throw closedException();
        }
        requests.terminateAt(count);
        int result;
        try {
            result = (int) IbvFunctions.POST_RECV.invokeExact(postRecvFunction, qp, requests.segment(), requests.badRequest());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        } finally {
            requests.relink(count);
        }
        if (result != 0) {
            throw IbverbsException.failed("ibv_post_recv", result, "queue pair " + number + ", work request "
                    + requests.badIndex() + " of " + count + " was not posted, nor were those after it");
        }
    }

    private IllegalStateException closedException() {
        return new IllegalStateException("queue pair " + number + " is closed");
    }

    private interface AttributeWriter {
        void write(MemorySegment attr);
    }

    private void modify(AttributeWriter writer, int mask, String target) {
        Calls.checkOpen(closed.get(), "queue pair " + number);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment a = arena.allocate(IBV_QP_ATTR);
            writer.write(a);
            int result = (int) IbvFunctions.MODIFY_QP.invokeExact(state, qp, a, mask);
            if (result != 0) {
                int errno = result > 0 ? result : Downcalls.errno(state);
                throw IbverbsException.failed("ibv_modify_qp", errno, "queue pair " + number + " to " + target);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Destroys the queue pair ({@code ibv_destroy_qp}). Idempotent. Outstanding work requests
     * are abandoned: their completions never arrive.
     *
     * @throws IbverbsException if the call fails (the queue pair then stays, so a later close can retry)
     */
    @Override
    public void close() {
        if (Calls.destroyOnce(closed, "ibv_destroy_qp", IbvFunctions.DESTROY_QP, qp)) {
            pd.removed(this);
        }
    }

    @Override
    public String toString() {
        return "QueuePair[" + number + (closed.get() ? ", closed]" : "]");
    }
}
