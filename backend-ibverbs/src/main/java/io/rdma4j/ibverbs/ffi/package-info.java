/**
 * The raw layer over {@code libibverbs.so.1}: the only package that imports {@code Linker},
 * {@code SymbolLookup} or {@code MethodHandle}. Function descriptors are written by hand from
 * rdma-core's {@code <infiniband/verbs.h>}, named at each binding.
 *
 * <p>Loading is lazy and happens once per process ({@link io.rdma4j.ibverbs.ffi.LibIbverbs#probe()});
 * the library is looked up in {@link java.lang.foreign.Arena#global()} and stays loaded. Per-call
 * scratch memory comes from a confined arena closed before the call returns; device lists are
 * freed exactly once.
 *
 * <p>Threading: probing is guarded by class initialisation, so concurrent callers see one result.
 * Errors: probing never throws; failures become an unavailability reason.
 *
 * <p>Running it needs native access: {@code --enable-native-access=io.rdma4j.ibverbs} on the module
 * path, {@code --enable-native-access=ALL-UNNAMED} on the class path.
 */
package io.rdma4j.ibverbs.ffi;
