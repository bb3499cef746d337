package io.rdma4j.transport.ibverbs.ffi;

/**
 * The constants of {@code <infiniband/verbs.h>} (rdma-core) that the bindings use, under their C
 * names so that one grep finds the man page, the header and this code. Every field here is
 * compared with the real header by {@code IbvLayoutsTest}, which compiles a C probe with gcc.
 */
public final class Ibv {

    private Ibv() {
    }

    // enum ibv_access_flags: memory-region and queue-pair access rights
    /** The NIC may write the local memory (needed for RDMA READ targets and receives). */
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the region. */
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    /** Peers may RDMA READ from the region. */
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    /** Peers may run atomics on the region. */
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;

    // enum ibv_qp_type
    /** Reliable connected. */
    public static final int IBV_QPT_RC = 2;

    // enum ibv_qp_state
    /** Reset: the state after creation. */
    public static final int IBV_QPS_RESET = 0;
    /** Initialised: receives may be posted. */
    public static final int IBV_QPS_INIT = 1;
    /** Ready to receive. */
    public static final int IBV_QPS_RTR = 2;
    /** Ready to send. */
    public static final int IBV_QPS_RTS = 3;
    /** Send queue drained. */
    public static final int IBV_QPS_SQD = 4;
    /** Send queue error. */
    public static final int IBV_QPS_SQE = 5;
    /** Error: every outstanding and new work request completes with a flush error. */
    public static final int IBV_QPS_ERR = 6;
    /** Unknown. */
    public static final int IBV_QPS_UNKNOWN = 7;

    // enum ibv_qp_attr_mask: which fields of struct ibv_qp_attr ibv_modify_qp/ibv_query_qp use
    /** {@code qp_state}. */
    public static final int IBV_QP_STATE = 1;
    /** {@code qp_access_flags}. */
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    /** {@code pkey_index}. */
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    /** {@code port_num}. */
    public static final int IBV_QP_PORT = 1 << 5;
    /** {@code ah_attr}: the address vector. */
    public static final int IBV_QP_AV = 1 << 7;
    /** {@code path_mtu}. */
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    /** {@code timeout}. */
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    /** {@code retry_cnt}. */
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    /** {@code rnr_retry}. */
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    /** {@code rq_psn}. */
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    /** {@code max_rd_atomic}. */
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    /** {@code min_rnr_timer}. */
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    /** {@code sq_psn}. */
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    /** {@code max_dest_rd_atomic}. */
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    /** {@code cap}. */
    public static final int IBV_QP_CAP = 1 << 19;
    /** {@code dest_qp_num}. */
    public static final int IBV_QP_DEST_QPN = 1 << 20;

    // enum ibv_mtu
    /** 256 bytes. */
    public static final int IBV_MTU_256 = 1;
    /** 512 bytes. */
    public static final int IBV_MTU_512 = 2;
    /** 1024 bytes. */
    public static final int IBV_MTU_1024 = 3;
    /** 2048 bytes. */
    public static final int IBV_MTU_2048 = 4;
    /** 4096 bytes. */
    public static final int IBV_MTU_4096 = 5;

    // enum ibv_port_state
    /** The port is down. */
    public static final int IBV_PORT_DOWN = 1;
    /** The port is active and can carry traffic. */
    public static final int IBV_PORT_ACTIVE = 4;

    // IBV_LINK_LAYER_*
    /** InfiniBand link layer: addressed by LID. */
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    /** Ethernet link layer (RoCE): addressed by GID only. */
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    // enum ibv_wr_opcode
    /** One-sided write into the peer's memory. */
    public static final int IBV_WR_RDMA_WRITE = 0;
    /** Two-sided send, consuming a receive on the peer. */
    public static final int IBV_WR_SEND = 2;
    /** One-sided read from the peer's memory. */
    public static final int IBV_WR_RDMA_READ = 4;

    // enum ibv_send_flags
    /** Generate a completion for this work request. */
    public static final int IBV_SEND_SIGNALED = 1 << 1;
    /**
     * Copy the request's data into the work queue entry at post time ({@code ibv_post_send}): the
     * device reads nothing of the source afterwards, which need not be registered. Only for sends and
     * writes of at most the queue pair's {@link QueuePair#maxInlineData()} bytes.
     */
    public static final int IBV_SEND_INLINE = 1 << 3;

    // enum ibv_wc_opcode
    /** Completion of a send. */
    public static final int IBV_WC_SEND = 0;
    /** Completion of an RDMA WRITE. */
    public static final int IBV_WC_RDMA_WRITE = 1;
    /** Completion of an RDMA READ. */
    public static final int IBV_WC_RDMA_READ = 2;
    /** Completion of a receive (a bit: {@code (opcode & IBV_WC_RECV) != 0} for every receive kind). */
    public static final int IBV_WC_RECV = 1 << 7;

    // enum ibv_wc_status (the ones the transport names; ibv_wc_status_str gives text for all)
    /** The work request completed. */
    public static final int IBV_WC_SUCCESS = 0;
    /** Local protection error: the lkey does not cover the scatter/gather entry. */
    public static final int IBV_WC_LOC_PROT_ERR = 4;
    /** Flushed because the queue pair is in the error state. */
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    /** Remote access error: wrong rkey, out-of-range address, or access not granted. */
    public static final int IBV_WC_REM_ACCESS_ERR = 10;
    /** The transport retry counter was exceeded: the peer did not answer. */
    public static final int IBV_WC_RETRY_EXC_ERR = 12;
    /** The last status value defined by the header ({@code IBV_WC_TM_RNDV_INCOMPLETE}). */
    public static final int IBV_WC_TM_RNDV_INCOMPLETE = 23;
}
