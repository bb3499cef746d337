/**
 * Not exported. The control endpoint every manager listens on (remote release, readiness,
 * transport handshakes) and the pooled client that talks to peers'. Wire format in
 * {@code Frames}.
 *
 * <pre>
 *   ControlClient (caller's virtual thread)            ControlServer (peer)
 *     pool[peer] -&gt; socket --- u32 len | type | body ---&gt; connection virtual thread
 *                          &lt;-- u32 len | OK/ERROR | body -- ControlService (the manager)
 * </pre>
 */
package io.rdma4j.internal.control;
