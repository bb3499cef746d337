/**
 * The same-host transport, {@code "shm"}: a holder on the same machine as a buffer's owner
 * copies the owner's memory itself with cross-memory attach ({@code process_vm_readv} /
 * {@code process_vm_writev}), one copy, no work on the owner's CPU per op.
 *
 * <p>Same host is decided from a {@link io.rdma4j.shm.HostIdentity} (boot id, namespaces, uid),
 * never from a host name. Yama's {@link io.rdma4j.shm.PtraceScope} decides whether the owner
 * must first allow its peers to attach.
 *
 * <p>The native calls live in {@code io.rdma4j.shm.ffi}; this package holds the logic and never
 * touches {@code Linker} or {@code MethodHandle}.
 */
package io.rdma4j.shm;
