package io.rdma4j.transport.ibverbs.ffi;

/**
 * What INIT -> RTR needs: where the peer is and how its packets are numbered. On RoCE
 * ({@link Ibv#IBV_LINK_LAYER_ETHERNET}) the peer is addressed by GID, so {@code destinationGid}
 * is required; on InfiniBand it may be absent (LID-only routing). Immutable.
 *
 * @param pathMtu                 {@code IBV_MTU_*}, at most both ports' active MTU
 * @param destinationQpNumber     the peer queue pair's number
 * @param receivePsn              the first packet sequence number expected from the peer (its send PSN), 24 bits
 * @param maxDestinationRdAtomic  RDMA READs/atomics the peer may have outstanding against this queue pair
 * @param minRnrTimer             receiver-not-ready NAK timer code (0-31)
 * @param portNumber              the local port, from 1
 * @param destinationLid          the peer's LID (0 on RoCE)
 * @param destinationGid          the peer's GID, or null for LID-only routing
 * @param sourceGidIndex          the index of the local GID to send from
 * @param hopLimit                IP hop limit / TTL for routed packets
 */
public record ReadyToReceive(int pathMtu, int destinationQpNumber, int receivePsn, int maxDestinationRdAtomic,
                             int minRnrTimer, int portNumber, int destinationLid, Gid destinationGid, int sourceGidIndex,
                             int hopLimit) {

    /**
     * Validates the ranges.
     *
     * @throws IllegalArgumentException if the MTU code, PSN, timer, port, GID index or hop limit is out of range
     */
    public ReadyToReceive {
        if (pathMtu < Ibv.IBV_MTU_256 || pathMtu > Ibv.IBV_MTU_4096) {
            throw new IllegalArgumentException("path MTU must be an IBV_MTU_* code (1-5), got " + pathMtu);
        }
        requireRange("receive PSN", receivePsn, 0, 0xFF_FFFF);
        requireRange("max destination RD atomic", maxDestinationRdAtomic, 0, 255);
        requireRange("min RNR timer", minRnrTimer, 0, 31);
        requireRange("port number", portNumber, 1, 255);
        requireRange("destination LID", destinationLid, 0, 0xFFFF);
        requireRange("source GID index", sourceGidIndex, 0, 255);
        requireRange("hop limit", hopLimit, 0, 255);
    }

    static void requireRange(String what, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(what + " must be in [" + min + ", " + max + "], got " + value);
        }
    }
}
