/**
 * The raw layer over the C library's cross-memory-attach, process-control, memory-file and
 * {@code AF_UNIX} socket calls (descriptor passing, peer credentials): the only
 * package of this module that imports {@code Linker}, {@code FunctionDescriptor} or
 * {@code MethodHandle}. Function descriptors are written by hand from the Linux man pages
 * ({@code process_vm_readv(2)}, {@code prctl(2)}, {@code memfd_create(2)}, {@code mmap(2)},
 * {@code unix(7)}, {@code cmsg(3)}), named at each binding. Binding itself, {@code errno} capture
 * and {@code errno} texts come from the shared module {@code io.rdma4j.unix}
 * ({@link io.rdma4j.unix.Downcalls}, {@link io.rdma4j.unix.Errno}).
 * <ul>
 *   <li>{@link io.rdma4j.transport.shm.ffi.Libc}: the process-wide probe, {@code prctl(PR_SET_PTRACER)},
 *       memory files ({@code memfd_create}, seals, {@code mmap}), {@code pidfd_open}, {@code geteuid}.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.ProcessVmCopier}: {@code process_vm_readv/writev} with
 *       preallocated {@code iovec}s, and whether a pidfd's process has exited.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.MemoryFile}: memory a same-host peer can map: a sealed memory
 *       file mapped into this process, its descriptor parked.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.ParkedFd}: a descriptor kept where {@code /proc/<pid>/fd}
 *       cannot reach it, until this process hands it over.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.UnixSockets}: {@code AF_UNIX} stream sockets in the abstract
 *       namespace, {@code SCM_RIGHTS} descriptor passing, {@code SO_PEERCRED}.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.LivenessLock}: a robust process-shared mutex held by one
 *       thread: a word other processes read, without a system call, to know this one lives.</li>
 *   <li>{@link io.rdma4j.transport.shm.ffi.SeqPacket}: {@code SOCK_SEQPACKET} socket pairs (the staging
 *       copy's request channel).</li>
 * </ul>
 *
 * <p>Binding is lazy and happens once per process: nothing native runs until
 * {@link io.rdma4j.transport.shm.ffi.Libc#probe()} or a {@link io.rdma4j.transport.shm.ffi.ProcessVmCopier} is first
 * used. Symbols come from the JVM's default lookup (the C library the JVM itself runs on).
 *
 * <p>Memory: a {@link io.rdma4j.transport.shm.ffi.ProcessVmCopier} preallocates its two {@code iovec}s and
 * its {@code errno} capture buffer once; an op allocates nothing. Errors on the data path are
 * values (an {@code errno}); {@link io.rdma4j.unix.Errno#describe(int)} turns one into text.
 *
 * <p>Running it needs native access: {@code --enable-native-access=io.rdma4j.transport.shm,io.rdma4j.unix} on
 * the module path, {@code --enable-native-access=ALL-UNNAMED} on the class path.
 */
package io.rdma4j.transport.shm.ffi;
