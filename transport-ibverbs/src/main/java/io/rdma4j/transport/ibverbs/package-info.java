/**
 * The ibverbs transport: RDMA WRITE and READ over libibverbs, through the FFM API. This package
 * holds its face to the manager and what ties the rest together; each concern has a subpackage.
 *
 * <p><b>Map.</b> Here:
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.VerbsTransportProvider}: the provider the manager finds with
 *       {@link java.util.ServiceLoader} ({@code "ibverbs"}, priority 200): availability, open.</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.VerbsSettings}: every {@code rdma.ibverbs.*} setting, and the
 *       values they parse to: {@link io.rdma4j.transport.ibverbs.DeviceTarget} (which NIC),
 *       {@link io.rdma4j.transport.ibverbs.PeerAffinity} (which NIC pairs with which);
 *       {@code VerbsTuning}: the data-path settings as the transport uses them.</li>
 *   <li>{@code VerbsTransport}: one manager's transport: registrations (memory regions on every
 *       device), routes to an owner's devices, submit, the control-channel server, close.</li>
 *   <li>{@code TokenChecks}: the owner's check of a token before its first op, once per token;</li>
 *   <li>{@code RegionAccess}: the access a registration's memory regions get (read-only: remote read only).</li>
 *   <li>{@code OpChunks}: how submit cuts one op into chunks (one work request each) over the lanes
 *       of its stripes, and queues or gathers them; {@code ActionLanes}: the lanes an action's
 *       small ops share, looked up once per action and peer.</li>
 *   <li>{@code VerbsWire}: the transport's bytes: token context, queue-pair handshake, token
 *       check, liveness probe.</li>
 *   <li>{@code VerbsLocal}: local memory prepared for ops (lkeys per device).</li>
 * </ul>
 * Subpackages, by concern:
 * <ul>
 *   <li>{@link io.rdma4j.transport.ibverbs.device}: the devices chosen, opened and polled (one completion
 *       queue and one poller thread per device).</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.queuepair}: queue pairs and their handshake: the holder side
 *       (making them towards an owner) and the owner side (accepting them), and their close.</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.posting}: posting work requests and completing submissions: one
 *       connected queue pair with its flow control, one submit, striping.</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.liveness}: the sweeps that find gone peers, holder side and owner
 *       side.</li>
 *   <li>{@link io.rdma4j.transport.ibverbs.ffi}: the native bindings (libibverbs, libc), and nothing else.</li>
 * </ul>
 * Only this package's provider is visible outside the module (it {@code provides} it and exports
 * no package); the subpackages' public types are public for each other, not for users.
 *
 * <p>Words: the <em>owner</em> registered the memory and hands out tokens; a <em>holder</em> of a
 * token reads and writes that memory. The holder makes the queue pairs and starts each handshake,
 * the owner accepts them.
 *
 * <p>Layers: nothing outside {@code ffi} imports {@code Linker}, {@code SymbolLookup} or
 * {@code MethodHandle}; native calls live in {@link io.rdma4j.transport.ibverbs.ffi}, and results arrive as
 * plain Java values. A test scans the compiled classes to keep it so.
 *
 * <pre>
 *   RdmaManager --availability(settings)--&gt; VerbsTransportProvider --probe()--&gt; ffi.LibIbverbs
 *                                                 |                              (once per process,
 *                &lt;-- available / why not --------+                               libibverbs.so.1)
 * </pre>
 *
 * <p>Threading: the public value types here are immutable or stateless and may be shared between
 * threads; the transport's classes document their own locking.
 * Errors: malformed configuration fails with {@link java.lang.IllegalArgumentException} naming
 * the offending value; absence of the library or of devices is reported as an
 * {@link io.rdma4j.spi.Availability}, never thrown.
 */
package io.rdma4j.transport.ibverbs;
