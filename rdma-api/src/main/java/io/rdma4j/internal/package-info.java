/**
 * Not exported. The registration table and its single writer's data, setting resolution, and
 * the mapping of transport errors onto public exceptions.
 *
 * <p>Threading: {@link io.rdma4j.internal.RegistrationTable} is written only by the
 * registration thread and read by any thread; {@link io.rdma4j.internal.Registration} pins are
 * taken and closed by transport threads.
 */
package io.rdma4j.internal;
