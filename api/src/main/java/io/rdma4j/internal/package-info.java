/**
 * Not exported. The manager's watchdog thread ({@link io.rdma4j.internal.WatchdogThread}), the
 * cache and sweeper of prepared local memory, setting resolution, and the mapping of transport
 * errors onto public exceptions. Registration is in {@link io.rdma4j.internal.registration}, the
 * control endpoint in {@link io.rdma4j.internal.control}.
 *
 * <ul>
 * <li>{@code WatchdogThread}: the manager's one watchdog, shared with its transports.</li>
 * <li>{@code LocalMemoryCache}: one transport's prepared local memory, cached and bounded.</li>
 * <li>{@code LocalMemorySweeper}: drops prepared memory whose arenas closed, waking only while there may be some.</li>
 * <li>{@code ResolvedSettings}: every declared setting, parsed and validated once.</li>
 * <li>{@code Errors}: maps what transports throw onto the public exception types.</li>
 * </ul>
 */
package io.rdma4j.internal;
