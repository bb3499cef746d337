package io.rdma4j.transport.ibverbs.ffi;

/**
 * What RTR -> RTS needs: this side's packet numbering and retry behaviour. Immutable.
 *
 * @param sendPsn       the first packet sequence number this side sends (the peer's receive PSN), 24 bits
 * @param timeout       local ACK timeout code: 4.096 us * 2^timeout (14 is about 67 ms), 0-31
 * @param retryCount    transport retries before {@link Ibv#IBV_WC_RETRY_EXC_ERR}, 0-7
 * @param rnrRetry      receiver-not-ready retries, 0-7 (7 = forever)
 * @param maxRdAtomic   RDMA READs/atomics this side may have outstanding
 */
public record ReadyToSend(int sendPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {

    /**
     * Validates the ranges.
     *
     * @throws IllegalArgumentException if a value is out of range
     */
    public ReadyToSend {
        ReadyToReceive.requireRange("send PSN", sendPsn, 0, 0xFF_FFFF);
        ReadyToReceive.requireRange("timeout", timeout, 0, 31);
        ReadyToReceive.requireRange("retry count", retryCount, 0, 7);
        ReadyToReceive.requireRange("RNR retry", rnrRetry, 0, 7);
        ReadyToReceive.requireRange("max RD atomic", maxRdAtomic, 0, 255);
    }
}
