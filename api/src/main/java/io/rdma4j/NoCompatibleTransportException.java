package io.rdma4j;

/**
 * No transport that this manager runs is advertised by the remote buffer's token (for example a
 * TCP-only process holding a token from a verbs-only owner). Nothing was sent.
 */
public class NoCompatibleTransportException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the token that could not be routed and the transports this manager runs
     */
    public NoCompatibleTransportException(String message) {
        super(message);
    }
}
