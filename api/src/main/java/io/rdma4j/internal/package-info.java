/**
 * Not exported. The manager's watchdog thread ({@link io.rdma4j.internal.WatchdogThread}), the
 * cache and sweeper of prepared local memory, setting resolution, and the mapping of transport
 * errors onto public exceptions. Registration is in {@link io.rdma4j.internal.registration}, the
 * control endpoint in {@link io.rdma4j.internal.control}.
 */
package io.rdma4j.internal;
