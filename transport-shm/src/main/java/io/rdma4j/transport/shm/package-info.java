/**
 * The same-host transport, {@code "shm"}: a holder on the same machine as a buffer's owner
 * copies the owner's memory itself, one copy, no work on the owner's CPU per op: an
 * {@code allocate()}d buffer is a memory file the owner hands over ({@code SCM_RIGHTS}, after
 * checking the key) and the holder maps; other registered memory goes by cross-memory attach
 * ({@code process_vm_readv} / {@code process_vm_writev}) where the kernel allows it.
 * docs/shm-security.md has the security model.
 *
 * <p>Same host is decided from a {@link io.rdma4j.transport.shm.HostIdentity} (boot id, namespaces, uid),
 * never from a host name. Yama's {@link io.rdma4j.transport.shm.PtraceScope} decides whether the owner
 * must first allow its peers to attach.
 *
 * <p>The native calls live in {@code io.rdma4j.transport.shm.ffi}; this package holds the logic and never
 * touches {@code Linker} or {@code MethodHandle}.
 */
package io.rdma4j.transport.shm;
