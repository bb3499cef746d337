/**
 * A project that only added the rdma4j dependency, built and run by {@code it/consumer/run}
 * against freshly installed artifacts.
 * <ul>
 *   <li>{@link io.rdma4j.consumer.Main}: moves 1 MiB each way between two managers, started on
 *       the class path or the module path, and checks the bytes.</li>
 * </ul>
 */
package io.rdma4j.consumer;
