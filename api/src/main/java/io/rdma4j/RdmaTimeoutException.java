package io.rdma4j;

/** A deadline passed before the operation finished. The message names the peer and the op. */
public class RdmaTimeoutException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param transport the transport whose deadline passed, or {@code null}
     * @param message what timed out: the peer and the op
     * @param cause   the transport's original error, or {@code null}
     */
    public RdmaTimeoutException(String transport, String message, Throwable cause) {
        super(transport, message, cause);
    }
}
