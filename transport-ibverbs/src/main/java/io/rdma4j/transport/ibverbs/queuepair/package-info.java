/**
 * The ibverbs transport's RC queue pairs and their handshake over the control channel.
 * <ul>
 *   <li>Holder side: {@link io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs} makes the queue pairs
 *       towards an owner (first use, handshake, a failed handshake remembered, replacement of a
 *       broken one), kept per (local device, owner incarnation, owner device) in a
 *       {@link io.rdma4j.transport.ibverbs.queuepair.PeerGroup} of {@code qpsPerPeer} slots.</li>
 *   <li>Owner side: {@link io.rdma4j.transport.ibverbs.queuepair.OwnerQueuePairs} answers a handshake with
 *       a queue pair of its own; {@link io.rdma4j.transport.ibverbs.queuepair.AcceptedQueuePairs} keeps the
 *       books of those (one per holder slot; a holder's successor retires its predecessor's).</li>
 *   <li>Both: {@link io.rdma4j.transport.ibverbs.queuepair.QueuePairLifecycle}: creating and connecting a
 *       queue pair (INIT, RTR, RTS), and the close that destroys every queue pair of both sides
 *       exactly once, before the devices close.</li>
 * </ul>
 * Which queue pairs go when a peer is gone is decided by {@link io.rdma4j.transport.ibverbs.liveness}; what
 * is posted on a connected one, by {@link io.rdma4j.transport.ibverbs.posting}.
 */
package io.rdma4j.transport.ibverbs.queuepair;
