/**
 * The raw layer over the C library's cross-memory-attach, process-control, memory-file and
 * {@code AF_UNIX} socket calls (descriptor passing, peer credentials): the only
 * package of this module that imports {@code Linker}, {@code FunctionDescriptor} or
 * {@code MethodHandle}. Function descriptors are written by hand from the Linux man pages
 * ({@code process_vm_readv(2)}, {@code prctl(2)}, {@code memfd_create(2)}, {@code mmap(2)},
 * {@code unix(7)}, {@code cmsg(3)}, {@code strerror(3)}), named at each binding.
 *
 * <p>Binding is lazy and happens once per process: nothing native runs until
 * {@link io.rdma4j.transport.shm.ffi.Libc#probe()} or a {@link io.rdma4j.transport.shm.ffi.ProcessVmCopier} is first
 * used. Symbols come from the JVM's default lookup (the C library the JVM itself runs on).
 *
 * <p>Memory: a {@link io.rdma4j.transport.shm.ffi.ProcessVmCopier} preallocates its two {@code iovec}s and
 * its {@code errno} capture buffer once; an op allocates nothing. Errors on the data path are
 * values (an {@code errno}); {@link io.rdma4j.transport.shm.ffi.Errno#describe(int)} turns one into text.
 *
 * <p>Running it needs native access: {@code --enable-native-access=io.rdma4j.transport.shm} on the module
 * path, {@code --enable-native-access=ALL-UNNAMED} on the class path.
 */
package io.rdma4j.transport.shm.ffi;
