/**
 * The transport SPI, version 2.
 *
 * <pre>
 *   RdmaManager (rdma4j-api)                           transport (rdma4j-transport-*)
 *   ----------------------                             ---------------------
 *   ServiceLoader&lt;TransportProvider&gt; -- settings() -----&gt; declared knobs
 *                                   -- availability() -&gt; available / why not
 *                                   -- open(context) ---&gt; Transport
 *   registration thread             -- allocate(size, arena) -&gt; memory it provides, or null
 *                                   -- register(id, seg) -&gt; context bytes, or "not applicable"
 *                                   -- release(id)
 *   any caller thread               -- decodeContext(ref) -&gt; decoded once per token (cached)
 *                                   -- prepareLocal(seg) -&gt; LocalMemory (cached, bounded)
 *                                   -- submit(ops, deadline) -&gt; CompletableFuture
 *   remote requests                 &lt;- context.registrations().lookup(incarnation, id, key, offset, length).pin()
 *   transport's own control msgs    &lt;- context.control()
 * </pre>
 *
 * <p>Ownership: the manager owns registered memory it allocated and keeps every registered segment
 * alive until every transport returned from {@link io.rdma4j.spi.Transport#release}; local segments
 * of ops belong to the caller and stay alive until the op's future completes; prepared
 * {@link io.rdma4j.spi.LocalMemory} belongs to the manager, which closes it. Errors that cross the
 * wire use {@link io.rdma4j.spi.ErrorCode}.
 */
package io.rdma4j.spi;
