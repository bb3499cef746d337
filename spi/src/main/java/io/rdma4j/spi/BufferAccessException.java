package io.rdma4j.spi;

import java.util.Objects;

/**
 * A request named a buffer it may not touch. Transports send {@link ErrorCode#of(Reason)} and the
 * message back to the remote requester and keep serving others. The message never says which of
 * "unknown", "released" or "wrong key" it was ({@link Reason#DENIED}).
 */
public class BufferAccessException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why access was refused. */
    public enum Reason {
        /**
         * No buffer with that id, released, or wrong access key: deliberately one reason, so that
         * nothing a requester sees tells the three apart.
         */
        DENIED,
        /** The token names an earlier incarnation of this manager. */
        STALE,
        /** The range lies outside the buffer. */
        OUT_OF_RANGE,
        /** The caller-owned memory behind the buffer was freed (arena closed). */
        CLOSED,
        /**
         * The request would write into a read-only registration ({@link LocalBuffer#readOnly()}):
         * nothing was written.
         */
        READ_ONLY
    }

    /** Why access was refused; never {@code null}. */
    private final Reason reason;
    /** The buffer id the request named. */
    private final long bufferId;

    /**
     * Creates the exception.
     *
     * @param reason   why access was refused
     * @param bufferId the buffer the request named
     * @param message  the text sent back to the remote requester
     * @throws NullPointerException if {@code reason} is {@code null}
     */
    public BufferAccessException(Reason reason, long bufferId, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.bufferId = bufferId;
    }

    /**
     * The refusal of a write into read-only buffer {@code bufferId}, in the words every transport
     * sends back, so that a holder sees the same message whichever transport carried the write.
     *
     * @param bufferId the buffer the request named
     * @return the exception, of reason {@link Reason#READ_ONLY}
     */
    public static BufferAccessException readOnly(long bufferId) {
        return new BufferAccessException(Reason.READ_ONLY, bufferId, "buffer " + bufferId
                + " is read-only: its owner registered it without remote write access, and refused the write "
                + "(nothing was written)");
    }

    /**
     * Why access was refused.
     *
     * @return the reason, never {@code null}
     */
    public Reason reason() {
        return reason;
    }

    /**
     * The buffer that was named.
     *
     * @return the id from the request
     */
    public long bufferId() {
        return bufferId;
    }
}
