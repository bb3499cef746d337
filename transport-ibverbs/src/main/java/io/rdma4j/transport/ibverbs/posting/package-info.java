/**
 * Posting work requests and completing submissions.
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.VerbsConnection}: one connected RC queue pair and its
 *       send-side flow control (credits, what waits, what is in flight), breaking down to ERROR
 *       and being destroyed once drained;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.PostingTurn}: whose turn it is to post to a queue pair,
 *       without making any thread wait for another one inside {@code ibv_post_send};</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.VerbsSubmission}: one {@code submit}: its chunks across
 *       connections, its future, its abort on timeout or cancel (no late DMA), and the repost of
 *       other submissions' chunks flushed by that abort;</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting.Stripes}: how a large op is spread across queue pairs.</li>
 * </ul>
 */
package io.rdma4j.transport.ibverbs.posting;
