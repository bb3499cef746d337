package io.rdma4j;

/** A peer could not be reached, or the connection to it broke mid-operation. */
public class PeerUnreachableException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param transport the transport that tried to reach the peer, or {@code null}
     * @param message what happened
     * @param cause   the transport's original error, or {@code null}
     */
    public PeerUnreachableException(String transport, String message, Throwable cause) {
        super(transport, message, cause);
    }
}
