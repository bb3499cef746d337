/**
 * Native helpers shared by rdma4j's FFM transports ({@code io.rdma4j.transport.shm.ffi},
 * {@code io.rdma4j.transport.ibverbs.ffi}); each transport's own bindings stay in its
 * {@code ffi} package.
 * <ul>
 *   <li>{@link io.rdma4j.unix.Downcalls}: binding a C function (from the C library or a given
 *       library), capturing and reading {@code errno}, rethrowing what a downcall threw.</li>
 *   <li>{@link io.rdma4j.unix.Errno}: the {@code errno} values acted on, and their
 *       {@code strerror} text for error messages.</li>
 *   <li>{@link io.rdma4j.unix.ResourceLimits}: the locked-memory limit, which registration
 *       errors quote.</li>
 * </ul>
 */
package io.rdma4j.unix;
