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
 *
 * <p>Read-only registrations: a read-only segment handed to {@code register} must never be
 * written by a peer; the transport refuses such writes on the owner's authority with
 * {@link io.rdma4j.spi.ErrorCode#READ_ONLY} (see {@link io.rdma4j.spi.Transport#register}).
 *
 * <h2>Map of the package</h2>
 * <p><b>A transport's parts</b> (what a transport module implements):
 * <ul>
 * <li>{@code TransportProvider}: the entry point, found by {@code ServiceLoader}: settings, availability, open.</li>
 * <li>{@code Transport}: one opened transport serving one manager: register, release, decode, submit.</li>
 * <li>{@code Availability}: whether a provider can run here and, if not, why in words a person can act on.</li>
 * <li>{@code Registered}: a transport's answer to a registration: token context bytes, or "not applicable".</li>
 * <li>{@code LocalMemory}: a caller's local memory as a transport prepared it (verbs: a memory region).</li>
 * <li>{@code RunOnJoin}: optional, for a submit's future: the thread about to wait does the work itself.</li>
 * </ul>
 *
 * <p><b>What the manager hands a transport</b>:
 * <ul>
 * <li>{@code TransportContext}: everything at open: settings, registrations, control channel, hosts, clock, watchdog.</li>
 * <li>{@code RegistrationLookup}: the owner side's read-only view of the manager's registrations.</li>
 * <li>{@code LocalBuffer}: one registration as the owner side serving a request sees it, touched only inside a pin.</li>
 * <li>{@code ControlChannel}: request/reply messages to the same transport in a peer manager.</li>
 * <li>{@code Watchdog}: the manager's one timer: bounds blocking I/O and plans work for later.</li>
 * <li>{@code Deadline}: a point in time on a {@code NanoClock} by which an operation must finish.</li>
 * <li>{@code NanoClock}: a monotonic clock: the system's, or a hand-moved one in tests.</li>
 * </ul>
 *
 * <p><b>Ops and remote buffers</b> (the holder side):
 * <ul>
 * <li>{@code TransportOp}: one transfer between a caller's local segment and a remote range.</li>
 * <li>{@code RemoteBufferRef}: the token's fields a transport needs, and its own context bytes.</li>
 * <li>{@code Endpoint}: a host and port as advertised on the wire.</li>
 * </ul>
 *
 * <p><b>Errors</b>:
 * <ul>
 * <li>{@code ErrorCode}: the one table of errors that cross the wire, and what each means to the requester.</li>
 * <li>{@code TransportException}: a transport operation failed, with a kind the manager maps to a public type.</li>
 * <li>{@code BufferAccessException}: a request named a buffer it may not touch (the owner side refuses it).</li>
 * </ul>
 *
 * <p><b>Settings</b>:
 * <ul>
 * <li>{@code Setting}: one knob: property, environment variable, default, parsing and validation.</li>
 * <li>{@code Settings}: the validated configuration a manager resolved at start.</li>
 * </ul>
 */
package io.rdma4j.spi;
