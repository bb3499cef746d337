/**
 * The ibverbs transport's logic: its provider ({@link io.rdma4j.ibverbs.IbverbsTransportProvider}),
 * its settings ({@link io.rdma4j.ibverbs.IbverbsSettings}), the value types they parse
 * ({@link io.rdma4j.ibverbs.DeviceTarget}, {@link io.rdma4j.ibverbs.PeerAffinity}), and the
 * transport itself: {@code VerbsTransport} (registrations, handshake, submit) over one
 * {@code VerbsDevice} (PD, completion queue and its poller thread), with {@code VerbsConnection}
 * (one RC queue pair and its flow control, posting in a {@code PostingTurn} that no thread waits
 * for), {@code VerbsSubmission} (one submit's completion and
 * abort) and {@code VerbsWire} (token context and control-plane messages).
 *
 * <p>Layers: nothing here imports {@code Linker}, {@code SymbolLookup} or {@code MethodHandle};
 * native calls live in {@link io.rdma4j.ibverbs.ffi}, and results arrive here as plain Java
 * values. A test scans the compiled classes to keep it so.
 *
 * <pre>
 *   RdmaManager --availability(settings)--&gt; IbverbsTransportProvider --probe()--&gt; ffi.LibIbverbs
 *                                                 |                              (once per process,
 *                &lt;-- available / why not --------+                               libibverbs.so.1)
 * </pre>
 *
 * <p>Threading: the public types here are immutable or stateless and may be shared between
 * threads; the transport's classes document their own locking.
 * Errors: malformed configuration fails with {@link java.lang.IllegalArgumentException} naming
 * the offending value; absence of the library or of devices is reported as an
 * {@link io.rdma4j.spi.Availability}, never thrown.
 */
package io.rdma4j.ibverbs;
