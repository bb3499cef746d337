/**
 * Remote access to off-heap memory: register a {@link java.lang.foreign.MemorySegment} with an
 * {@link io.rdma4j.RdmaManager}, send its {@link io.rdma4j.RdmaRemoteBuffer} token anywhere, and
 * let the holder read or write it over the fastest transport both sides run.
 *
 * <pre>
 *   owner process                                   holder process
 *   -------------                                   --------------
 *   manager.register(segment) / allocate(n)
 *        |  (registration thread: every transport)
 *        v
 *   RdmaRemoteBuffer --- toBytes() --- any channel ---&gt; fromBytes()
 *                                                       manager.read / write / newAction()
 *   transports serve the bytes   &lt;=== verbs or TCP ===  (routed to the fastest shared transport)
 *   control endpoint             &lt;--- release, readiness, handshakes
 * </pre>
 *
 * <p><b>Errors.</b> Misuse (heap or closed segments, size mismatches, malformed tokens) throws
 * {@link java.lang.IllegalArgumentException} at the call. Everything else fails the returned
 * future with an {@link io.rdma4j.RdmaException}: {@link io.rdma4j.RdmaSubmitException} and
 * {@link io.rdma4j.RdmaReleaseException} list each transport's error, whose types say what
 * happened ({@link io.rdma4j.RdmaTimeoutException}, {@link io.rdma4j.RemoteAccessException},
 * {@link io.rdma4j.PeerUnreachableException}).
 *
 * <p><b>Memory ownership.</b> Segments passed to {@code register} and to actions stay the
 * caller's; {@link io.rdma4j.RdmaManager#allocate} memory is the manager's and is freed only
 * after every transport released it and the last remote access finished.
 *
 * <h2>Map of the package</h2>
 * Public types are the API; the others are the manager's parts, package-private.
 *
 * <p><b>The manager</b>:
 * <ul>
 * <li>{@code RdmaManager}: registers memory, hands out tokens, reads and writes remote buffers.</li>
 * <li>{@code RdmaManagerBuilder}: configures and starts a manager.</li>
 * <li>{@code SharedManager}: the process-wide manager behind {@code RdmaManager.shared()}.</li>
 * </ul>
 *
 * <p><b>Discovery and startup</b>:
 * <ul>
 * <li>{@code ManagerStartup}: finds the transport providers and the settings they declare, opens every available transport in priority order.</li>
 * <li>{@code OpenTransport}: one opened transport with its rank and its cache of prepared local memory.</li>
 * <li>{@code TransportInfo}: what a manager found out about one discovered transport (public).</li>
 * <li>{@code ManagerControl}: what a manager answers on its control endpoint: remote releases, readiness, transports' own requests.</li>
 * <li>{@code PeerReadiness}: a peer manager's answer to a readiness probe (public).</li>
 * <li>{@code RouteLog}: says once per peer at INFO which transport serves it and why not the others.</li>
 * </ul>
 *
 * <p><b>Registration</b>:
 * <ul>
 * <li>{@code Registrar}: the registration thread's work: ids and keys, every transport in order, rollback, release, close.</li>
 * <li>{@code ObservedRegistrar}: the registrar's work counted and recorded as JFR events.</li>
 * <li>{@code RdmaBuffer}: memory the manager allocated and registered, and owns (public).</li>
 * <li>{@code Segments}: the checks every segment passes before anything touches it.</li>
 * </ul>
 *
 * <p><b>The token and its codec</b>:
 * <ul>
 * <li>{@code RdmaRemoteBuffer}: the token naming a registered buffer, safe to send anywhere; its javadoc documents the wire form (public).</li>
 * <li>{@code TokenCodec}: writes and reads that wire form.</li>
 * </ul>
 *
 * <p><b>Actions and futures</b>:
 * <ul>
 * <li>{@code RdmaAction}: a batch of reads and writes submitted together (public).</li>
 * <li>{@code Dispatcher}: routes each op to the first transport both sides run, makes exact transport ops, runs each group.</li>
 * <li>{@code ActionGroup}: an action's ops for one transport and the local memory they hold.</li>
 * <li>{@code ActionFuture}: the future of a submitted action, as handed to the caller.</li>
 * <li>{@code RdmaResult}: what a completed action did: transports, ops, bytes, duration (public).</li>
 * </ul>
 *
 * <p><b>Settings</b>:
 * <ul>
 * <li>{@code RdmaSettings}: the manager's own settings (public).</li>
 * <li>{@code SettingsCheck}: catches mistyped {@code rdma.*} properties and {@code RDMA_*} variables at start.</li>
 * </ul>
 *
 * <p><b>Statistics and events</b>:
 * <ul>
 * <li>{@code RdmaStats}: a snapshot of a manager's counters (public).</li>
 * <li>{@code ManagerStats}: the counters themselves, striped, nothing allocated per op.</li>
 * <li>{@code RdmaEvents}: the JDK Flight Recorder events of registrations and transfers.</li>
 * </ul>
 *
 * <p><b>Errors</b> (all public):
 * <ul>
 * <li>{@code RdmaException}: the root: an operation failed because of the environment.</li>
 * <li>{@code MultiTransportException}: one operation failed on several transports, each listed.</li>
 * <li>{@code RdmaSubmitException}: an action failed on one or more transports.</li>
 * <li>{@code RdmaReleaseException}: a release failed on one or more transports (the buffer is released anyway).</li>
 * <li>{@code RegistrationException}: registering with a transport failed; the others were rolled back.</li>
 * <li>{@code RdmaTimeoutException}: a deadline passed first.</li>
 * <li>{@code RemoteAccessException}: the owner refused the access (unknown, released, wrong key, out of range).</li>
 * <li>{@code StaleTokenException}: the token names an earlier incarnation of the owner.</li>
 * <li>{@code PeerUnreachableException}: a peer could not be reached, or its connection broke.</li>
 * <li>{@code NoCompatibleTransportException}: no transport this manager runs is in the token.</li>
 * <li>{@code TransportUnavailableException}: a manager could not start: no transport could run.</li>
 * <li>{@code ManagerClosedException}: the manager was closed before or during the operation.</li>
 * </ul>
 * The manager's internals (watchdog, caches of prepared memory, setting resolution, the control
 * endpoint, the registration ring) are in {@code io.rdma4j.internal} and below it.
 */
package io.rdma4j;
