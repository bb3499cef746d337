/**
 * The liveness sweeps: how each side finds a peer gone for good, so that the queue pairs it keeps
 * for that peer do not stay for ever.
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.liveness.HolderSweep}: the holder asks the owners it keeps queue
 *       pairs to and has not used lately; one found gone loses its queue pairs
 *       ({@link io.rdma4j.transport.ibverbs.queuepair.HolderQueuePairs#retireOwner});</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.liveness.OwnerSweep}: the owner asks the holders it accepted
 *       queue pairs from; one found gone loses them
 *       ({@link io.rdma4j.transport.ibverbs.queuepair.OwnerQueuePairs#retireGone});</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.liveness.SweepRounds}: the rounds of one sweep on the manager's
 *       watchdog;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.liveness.PeerSilence}: how long each peer has left its probes
 *       unanswered, against {@code rdma.ibverbs.peerSilenceLimit}.</li>
 * </ul>
 * A probe is a {@code VerbsWire.Probe} over the control channel; the answer names the
 * incarnation there. Only proof (unreachable, another incarnation, silence for the limit) retires.
 */
package io.rdma4j.transport.ibverbs.liveness;
