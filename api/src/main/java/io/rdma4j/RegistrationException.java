package io.rdma4j;

/**
 * Registering a segment with a transport failed. The transports that had already registered it
 * were rolled back; the cause is the transport's original error.
 */
public class RegistrationException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param transport the transport that failed to register the segment
     * @param message what happened
     * @param cause   the transport's original error
     */
    public RegistrationException(String transport, String message, Throwable cause) {
        super(transport, message, cause);
    }
}
