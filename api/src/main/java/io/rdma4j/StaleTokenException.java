package io.rdma4j;

/**
 * The token names an earlier incarnation of the manager now listening at its owner's endpoint:
 * the owner restarted (or another manager took its port), and the buffer the token named is gone.
 * The new manager never serves such a token from its own memory. Get a fresh token from the owner.
 */
public class StaleTokenException extends RemoteAccessException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param transport the transport that carried the request, or {@code null}
     * @param message   the owner's reason for refusing, naming both incarnations
     * @param cause     the original error, or {@code null}
     */
    public StaleTokenException(String transport, String message, Throwable cause) {
        super(transport, message, cause);
    }
}
