/**
 * The transport SPI.
 *
 * <pre>
 *   RdmaManager (rdma-api)                               transport (backend-*)
 *   ----------------------                               ---------------------
 *   ServiceLoader&lt;BackendProvider&gt; ---- settings() -----&gt; declared knobs
 *                                   ---- availability() -&gt; available / why not
 *                                   ---- open(context) ---&gt; Backend
 *   registration thread             ---- register(id, seg) -&gt; context bytes (into the token)
 *                                   ---- release(id)
 *   any caller thread               ---- submit(ops, deadline) -&gt; CompletableFuture
 *   remote requests                 &lt;--- context.registrations().lookup(id, key).pin()
 * </pre>
 *
 * <p>Ownership: the manager owns registered memory and keeps it alive until every transport
 * returned from {@link io.rdma4j.spi.Backend#release}; local segments of ops belong to the
 * caller and must stay alive until the op's future completes.
 */
package io.rdma4j.spi;
