/**
 * Posting work requests and completing submissions.
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.VerbsConnection}: one connected RC queue pair and its
 *       send-side flow control (credits, what waits, what is in flight), breaking down to ERROR
 *       and being destroyed once drained;</li>
 *   <li>{@code SendChains}: the chains of work requests a connection
 *       posts (selective signalling, inline writes), and what was sent and not yet completed;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.Chunk}: one work request's worth of an op, from its
 *       queueing to its completion;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.PostingTurn}: whose turn it is to post to a queue pair,
 *       without making any thread wait for another one inside {@code ibv_post_send};</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.VerbsSubmission}: one {@code submit}: its chunks across
 *       connections, its abort on timeout or cancel (no late DMA), and the repost of other
 *       submissions' chunks flushed by that abort;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.SubmissionFuture}: a submission's future, which stops
 *       the submission before it completes from outside, and lets a waiting thread poll;</li>
 *   <li>{@code Gathered}: a submission's small ops gathered per connection by the submitting thread,
 *       posted as one chain each;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.Stripes}: how a large op is spread across queue pairs.</li>
 * </ul>
 */
package io.rdma4j.transport.ibverbs.posting;
