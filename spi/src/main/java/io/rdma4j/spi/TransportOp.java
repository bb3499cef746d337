package io.rdma4j.spi;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * One transfer of exactly {@code local.byteSize()} bytes between a caller's local segment and the
 * range starting at {@code remoteOffset} of a remote registration. The manager has already applied
 * the public prefix rules (a read fills the local prefix, a write the remote prefix) and the
 * token's slice: {@code local} is exactly the bytes to move, and the remote range
 * {@code [remoteOffset, remoteOffset + local.byteSize())} lies inside the slice the token names.
 * The owner checks that range against the registration again on every request.
 *
 * @param type          direction
 * @param local         the caller's native memory, exactly the bytes to move; owned by the
 *                      caller, alive until the op's future completes
 * @param localMemory   what {@link Transport#prepareLocal} returned for memory containing
 *                      {@code local}, or what the registration containing it prepared; {@code null}
 *                      when the transport prepares nothing. Owned by the manager
 * @param remote        the buffer on the peer, with this transport's context
 * @param remoteContext what {@link Transport#decodeContext} returned for {@code remote}
 * @param remoteOffset  where the range starts within the remote registration, in bytes
 */
public record TransportOp(OpType type, MemorySegment local, LocalMemory localMemory, RemoteBufferRef remote,
                          Object remoteContext, long remoteOffset) {

    /**
     * Checks the components.
     *
     * @param type          direction
     * @param local         the caller's memory, exactly the bytes to move
     * @param localMemory   the prepared local memory, or {@code null}
     * @param remote        the buffer on the peer
     * @param remoteContext the decoded context
     * @param remoteOffset  where the range starts within the remote registration
     * @throws NullPointerException     if {@code type}, {@code local}, {@code remote} or
     *                                  {@code remoteContext} is {@code null}
     * @throws IllegalArgumentException if {@code local} is empty or {@code remoteOffset} negative
     */
    public TransportOp {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(local, "local");
        Objects.requireNonNull(remote, "remote");
        Objects.requireNonNull(remoteContext, "remoteContext");
        if (local.byteSize() == 0 || remoteOffset < 0) {
            throw new IllegalArgumentException("an op moves at least one byte from a non-negative offset: "
                    + local.byteSize() + " bytes at " + remoteOffset);
        }
    }

    /**
     * An op with no prepared local memory whose remote context is the raw context bytes (tests,
     * transports that prepare nothing).
     *
     * @param type   direction
     * @param local  the caller's memory, exactly the bytes to move
     * @param remote the buffer on the peer
     * @return the op, at remote offset 0
     */
    public static TransportOp of(OpType type, MemorySegment local, RemoteBufferRef remote) {
        return new TransportOp(type, local, null, remote, remote.context(), 0);
    }

    /**
     * Bytes this op moves.
     *
     * @return {@code local().byteSize()}
     */
    public long length() {
        return local.byteSize();
    }

    /**
     * The decoded remote context, cast to the transport's own type.
     *
     * @param <T>  the type {@link Transport#decodeContext} returns
     * @param type its class
     * @return the decoded context
     * @throws ClassCastException if it is not a {@code type}
     */
    public <T> T remoteContext(Class<T> type) {
        return type.cast(remoteContext);
    }

    /** Direction of a {@link TransportOp}. */
    public enum OpType {
        /** Remote buffer to local memory. */
        READ_INTO_LOCAL,
        /** Local memory to remote buffer. */
        WRITE_FROM_LOCAL
    }
}
