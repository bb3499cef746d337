package io.rdma4j;

/**
 * An RDMA operation failed because of the environment: a transport, a peer, the network, the
 * native library. Misuse (bad sizes, heap segments, malformed tokens) throws
 * {@link IllegalArgumentException} or {@link IllegalStateException} instead.
 *
 * <p>Unchecked, because most of the API returns futures, where checked exceptions would only be
 * wrapped. {@link #backend()} names the transport when one was involved.
 */
public class RdmaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String backend;

    public RdmaException(String message) {
        this(null, message, null);
    }

    public RdmaException(String message, Throwable cause) {
        this(null, message, cause);
    }

    public RdmaException(String backend, String message, Throwable cause) {
        super(message, cause);
        this.backend = backend;
    }

    /** The transport involved ({@code "tcp"}, {@code "ibverbs"}), or {@code null}. */
    public String backend() {
        return backend;
    }
}
