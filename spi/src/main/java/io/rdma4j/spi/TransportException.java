package io.rdma4j.spi;

import java.util.Objects;

/**
 * A transport operation failed. {@link #kind()} lets the manager map it onto the public
 * exception types without knowing the transport.
 */
public class TransportException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What went wrong, broadly. */
    public enum Kind {
        /** The deadline passed before the peer answered. */
        TIMEOUT,
        /** The owner refused access: no such buffer, released, wrong key, out of range, memory closed, a write into a read-only buffer. */
        REMOTE_ACCESS,
        /** The token was issued by an earlier incarnation of the manager at the owner's endpoint. */
        STALE_TOKEN,
        /** The owner tried to release the buffer and one of its transports failed. */
        RELEASE_FAILED,
        /** Something else failed at the owner (see the message). */
        REMOTE_FAILURE,
        /** The peer could not be reached, or the connection broke. */
        PEER_UNREACHABLE,
        /** The peer spoke something this side does not understand. */
        PROTOCOL,
        /** The local memory could not be used (arena closed, ...). */
        LOCAL_ACCESS,
        /** The transport itself failed (native error, closed transport, ...). */
        INTERNAL
    }

    /** What went wrong, broadly; never {@code null}. */
    private final Kind kind;

    /**
     * Creates the exception without a cause.
     *
     * @param kind    what went wrong, broadly
     * @param message what happened, in words the manager puts into its own error
     * @throws NullPointerException if {@code kind} is {@code null}
     */
    public TransportException(Kind kind, String message) {
        this(kind, message, null);
    }

    /**
     * Creates the exception.
     *
     * @param kind    what went wrong, broadly
     * @param message what happened, in words the manager puts into its own error
     * @param cause   the underlying failure, or {@code null}
     * @throws NullPointerException if {@code kind} is {@code null}
     */
    public TransportException(Kind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /**
     * What went wrong, broadly.
     *
     * @return the kind, never {@code null}
     */
    public Kind kind() {
        return kind;
    }
}
