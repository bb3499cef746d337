package io.rdma4j.spi;

/**
 * How fast a transport is, slowest first. The order is meaningful: {@code TCP < NIC < MEMORY}.
 */
public enum TransportLevel {
    /** Bytes cross a TCP connection and are copied by the owner's CPU. */
    TCP,
    /** One-sided RDMA through a network adapter (verbs). */
    NIC,
    /** Same-host shared memory. No transport reports it yet. */
    MEMORY
}
