/**
 * The native helpers rdma4j's FFM transports share (as Netty's {@code transport-native-unix-common}
 * serves its native transports): binding C functions, reading the {@code errno} a call left, the
 * text of an {@code errno}, resource limits. Not an API for applications: the package is exported
 * to the transports alone.
 *
 * <p>This module binds native functions, so the JVM wants native access allowed for it, as for
 * the transports: {@code --enable-native-access=io.rdma4j.unix,...} on the module path
 * ({@code ALL-UNNAMED} on the class path).
 */
@SuppressWarnings("module")     // the transports are not on this module's compile path
module io.rdma4j.unix {
    exports io.rdma4j.unix to io.rdma4j.transport.shm, io.rdma4j.transport.ibverbs;
}
