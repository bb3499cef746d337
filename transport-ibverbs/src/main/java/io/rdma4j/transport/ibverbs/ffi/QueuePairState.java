package io.rdma4j.transport.ibverbs.ffi;

/** {@code enum ibv_qp_state}, in the order of its values. */
public enum QueuePairState {
    /** {@code IBV_QPS_RESET}. */
    RESET,
    /** {@code IBV_QPS_INIT}. */
    INIT,
    /** {@code IBV_QPS_RTR}: ready to receive. */
    READY_TO_RECEIVE,
    /** {@code IBV_QPS_RTS}: ready to send. */
    READY_TO_SEND,
    /** {@code IBV_QPS_SQD}. */
    SEND_QUEUE_DRAINED,
    /** {@code IBV_QPS_SQE}. */
    SEND_QUEUE_ERROR,
    /** {@code IBV_QPS_ERR}: every posted and new work request is flushed. */
    ERROR,
    /** {@code IBV_QPS_UNKNOWN}. */
    UNKNOWN;

    private static final QueuePairState[] VALUES = values();

    /**
     * The state for a C value.
     *
     * @param value an {@code IBV_QPS_*} value
     * @return its state, {@link #UNKNOWN} for a value outside the enum
     */
    public static QueuePairState of(int value) {
        return value >= 0 && value < VALUES.length ? VALUES[value] : UNKNOWN;
    }
}
