/**
 * The ibverbs transport's devices: which are used, and how their completions are taken.
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.DeviceChoice}: which devices a device target allows, best
 *       ranked first, and why;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.PciTopology}: the host's PCI tree from sysfs, to place
 *       devices near a GPU;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.DeviceOpening}: opens the devices chosen, and picks the
 *       GID of a port they address;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.VerbsDevice}: one opened device: protection domain, one
 *       completion queue and channel, and the poller thread that serves them;</li>
 *   <li>{@code CompletionBatch}: the chunks the completions of one poll stand for, delivered in order
 *       (a run of successes of one submission at once);</li>
 *   <li>{@code Deliveries}: the batches each thread is delivering, so that a poll nested in a delivery
 *       delivers the rest of them first;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.PollWindow}: how long a device's queue is polled on empty
 *       before the poller (or a waiting thread) sleeps;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.device.WorkRequestTable}: the chunks posted on one device and not
 *       yet completed, by work request id.</li>
 * </ul>
 * Completions go to the {@link io.rdma4j.transport.ibverbs.posting} side (a connection, a submission).
 */
package io.rdma4j.transport.ibverbs.device;
