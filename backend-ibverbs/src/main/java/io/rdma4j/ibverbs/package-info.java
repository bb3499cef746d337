/**
 * The ibverbs transport's logic: its provider ({@link io.rdma4j.ibverbs.IbverbsTransportProvider}),
 * its settings ({@link io.rdma4j.ibverbs.IbverbsSettings}) and the value types they parse
 * ({@link io.rdma4j.ibverbs.DeviceTarget}, {@link io.rdma4j.ibverbs.PeerAffinity}).
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
 * <p>Threading: every type here is immutable or stateless and may be shared between threads.
 * Errors: malformed configuration fails with {@link java.lang.IllegalArgumentException} naming
 * the offending value; absence of the library or of devices is reported as an
 * {@link io.rdma4j.spi.Availability}, never thrown.
 */
package io.rdma4j.ibverbs;
