package io.rdma4j.spi;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One transfer between a local segment and a whole remote buffer, with the reference's
 * prefix semantics: a read copies the whole remote buffer into the first
 * {@code remote.size()} bytes of {@code local}; a write copies the whole of {@code local} into
 * the first {@code local.byteSize()} bytes of the remote buffer. Bytes beyond are untouched.
 *
 * @param type   direction
 * @param local  native memory of the caller, owned by the caller, alive until the op completes
 * @param remote the buffer on the peer, with this transport's context
 */
public record BackendOp(OpType type, MemorySegment local, RemoteBufferRef remote) {

    /**
     * Checks that every component is present.
     *
     * @param type   direction
     * @param local  native memory of the caller, owned by the caller, alive until the op completes
     * @param remote the buffer on the peer, with this transport's context
     * @throws NullPointerException if any component is {@code null}
     */
    public BackendOp {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
    }

    /**
     * Bytes this op moves: the remote size for a read, the local size for a write.
     *
     * @return the number of bytes transferred
     */
    public long transferBytes() {
        return type == OpType.READ_INTO_LOCAL ? remote.size() : local.byteSize();
    }

    /** Direction of a {@link BackendOp}. */
    public enum OpType {
        /** Remote buffer to local memory. */
        READ_INTO_LOCAL,
        /** Local memory to remote buffer. */
        WRITE_FROM_LOCAL
    }
}
