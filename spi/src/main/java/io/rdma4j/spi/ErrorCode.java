package io.rdma4j.spi;

/**
 * The one table of errors that cross the wire: every code a peer may send back, on the control
 * plane and on every transport's data path, with the {@link TransportException.Kind} it means on
 * the requesting side. The manager maps kinds to its public exception types, so an error keeps its
 * meaning from the owner's refusal to the caller's exception.
 *
 * <p>Codes are one byte on the wire and never change meaning; a code this side does not know reads
 * as {@link #FAILED}.
 */
public enum ErrorCode {

    /**
     * The request named a buffer it may not touch: no such id, released, or wrong access key. The
     * three are never told apart on the wire, so that a token's holder learns nothing about other
     * buffers; the owner's log says which it was.
     */
    ACCESS_DENIED(1, TransportException.Kind.REMOTE_ACCESS),
    /** The token was issued by an earlier incarnation of the manager now at that endpoint. */
    STALE_TOKEN(2, TransportException.Kind.STALE_TOKEN),
    /** The range lies outside the registered buffer. */
    OUT_OF_RANGE(3, TransportException.Kind.REMOTE_ACCESS),
    /** The owner closed the memory behind the buffer without releasing it first. */
    OWNER_MEMORY_CLOSED(4, TransportException.Kind.REMOTE_ACCESS),
    /** The request was malformed; the owner closes that connection. */
    BAD_REQUEST(5, TransportException.Kind.PROTOCOL),
    /** The owner accepted a release but a transport there failed to release the buffer. */
    RELEASE_FAILED(6, TransportException.Kind.RELEASE_FAILED),
    /** Anything else failed at the owner; the message says what. */
    FAILED(7, TransportException.Kind.REMOTE_FAILURE),
    /**
     * The request would write into a buffer its owner registered read-only; nothing was written.
     * A peer of a version without this code reads it as {@link #FAILED}, with the owner's text.
     */
    READ_ONLY(8, TransportException.Kind.REMOTE_ACCESS);

    private static final ErrorCode[] BY_WIRE = new ErrorCode[256];

    static {
        for (ErrorCode c : values()) {
            BY_WIRE[c.wire] = c;
        }
    }

    private final int wire;
    private final TransportException.Kind kind;

    ErrorCode(int wire, TransportException.Kind kind) {
        this.wire = wire;
        this.kind = kind;
    }

    /**
     * The byte sent on the wire.
     *
     * @return 1..255
     */
    public int wire() {
        return wire;
    }

    /**
     * What the code means to the requester.
     *
     * @return the kind of {@link TransportException} a requester raises for it
     */
    public TransportException.Kind kind() {
        return kind;
    }

    /**
     * The code for a byte read from the wire.
     *
     * @param wire the byte, as an unsigned value
     * @return its code; {@link #FAILED} for a byte no version defines
     */
    public static ErrorCode fromWire(int wire) {
        ErrorCode c = wire >= 0 && wire < BY_WIRE.length ? BY_WIRE[wire] : null;
        return c == null ? FAILED : c;
    }

    /**
     * The code an owner sends when it refused access.
     *
     * @param reason why the owner refused
     * @return the code for it
     */
    public static ErrorCode of(BufferAccessException.Reason reason) {
        return switch (reason) {
            case DENIED -> ACCESS_DENIED;
            case STALE -> STALE_TOKEN;
            case OUT_OF_RANGE -> OUT_OF_RANGE;
            case CLOSED -> OWNER_MEMORY_CLOSED;
            case READ_ONLY -> READ_ONLY;
        };
    }

    /**
     * The exception a requester raises when the owner answered this code.
     *
     * @param message the owner's text
     * @return a {@link TransportException} of this code's kind
     */
    public TransportException toException(String message) {
        return new TransportException(kind, message);
    }
}
