package io.rdma4j;

/**
 * An RDMA operation failed because of the environment: a transport, a peer, the network, the
 * native library. Misuse (bad sizes, heap segments, malformed tokens) throws
 * {@link IllegalArgumentException} or {@link IllegalStateException} instead.
 *
 * <p>Unchecked, because most of the API returns futures, where checked exceptions would only be
 * wrapped. {@link #transport()} names the transport when one was involved.
 */
public class RdmaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** The transport involved, or {@code null}. */
    private final String transport;

    /**
     * An error that involves no particular transport and has no cause.
     *
     * @param message what went wrong
     */
    public RdmaException(String message) {
        this(null, message, null);
    }

    /**
     * An error that involves no particular transport.
     *
     * @param message what went wrong
     * @param cause   the underlying failure, or {@code null}
     */
    public RdmaException(String message, Throwable cause) {
        this(null, message, cause);
    }

    /**
     * An error, naming the transport involved.
     *
     * @param transport the transport's name ({@code "tcp"}, {@code "ibverbs"}), or {@code null} when
     *                none was involved
     * @param message what went wrong
     * @param cause   the underlying failure, or {@code null}
     */
    public RdmaException(String transport, String message, Throwable cause) {
        super(message, cause);
        this.transport = transport;
    }

    /**
     * The transport involved ({@code "tcp"}, {@code "ibverbs"}), or {@code null}.
     *
     * @return the transport's name, or {@code null} when none was involved
     */
    public String transport() {
        return transport;
    }
}
