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
     * @param backend the transport that failed to register the segment
     * @param message what happened
     * @param cause   the transport's original error
     */
    public RegistrationException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
