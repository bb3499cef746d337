package io.rdma4j.transport.ibverbs.ffi;

import java.util.Objects;

/**
 * What a reliable-connected queue pair is created with ({@code struct ibv_qp_init_attr}).
 * Completions are generated only for work requests posted with {@link Ibv#IBV_SEND_SIGNALED}
 * ({@code sq_sig_all = 0}). Immutable.
 *
 * @param sendQueue          where send-side completions go
 * @param receiveQueue       where receive completions go (may be the same queue)
 * @param maxSendRequests    outstanding send work requests, at least 1
 * @param maxReceiveRequests outstanding receive work requests, at least 1
 * @param maxSendSges        scatter/gather entries per send work request, at least 1
 * @param maxReceiveSges     scatter/gather entries per receive work request, at least 1
 * @param maxInlineData      bytes a send work request may carry inline ({@link Ibv#IBV_SEND_INLINE}), at least 0;
 *                           the driver may give more ({@link QueuePair#maxInlineData()}), and refuses the queue
 *                           pair when it cannot give as much
 */
public record QueuePairInit(CompletionQueue sendQueue, CompletionQueue receiveQueue, int maxSendRequests,
                            int maxReceiveRequests, int maxSendSges, int maxReceiveSges, int maxInlineData) {

    /**
     * A queue pair that carries no inline data ({@code maxInlineData} 0).
     *
     * @throws NullPointerException     if a queue is null
     * @throws IllegalArgumentException if a capacity is below 1
     */
    public QueuePairInit(CompletionQueue sendQueue, CompletionQueue receiveQueue, int maxSendRequests,
                         int maxReceiveRequests, int maxSendSges, int maxReceiveSges) {
        this(sendQueue, receiveQueue, maxSendRequests, maxReceiveRequests, maxSendSges, maxReceiveSges, 0);
    }

    /**
     * Validates the values.
     *
     * @throws NullPointerException     if a queue is null
     * @throws IllegalArgumentException if a capacity is below 1, or {@code maxInlineData} below 0
     */
    public QueuePairInit {
        Objects.requireNonNull(sendQueue, "sendQueue");
        Objects.requireNonNull(receiveQueue, "receiveQueue");
        if (maxSendRequests < 1 || maxReceiveRequests < 1 || maxSendSges < 1 || maxReceiveSges < 1) {
            throw new IllegalArgumentException("queue pair capacities must be at least 1: send " + maxSendRequests
                    + ", receive " + maxReceiveRequests + ", send SGEs " + maxSendSges + ", receive SGEs " + maxReceiveSges);
        }
        if (maxInlineData < 0) {
            throw new IllegalArgumentException("maxInlineData must be at least 0, got " + maxInlineData);
        }
    }
}
