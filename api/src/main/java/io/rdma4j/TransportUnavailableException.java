package io.rdma4j;

/**
 * A manager could not start because no transport could run: none was available
 * ({@code "no RDMA transport available"}), or every available one failed to open
 * ({@code "all available RDMA transports failed to initialize"}). The message lists each
 * transport's reason; each open failure is also attached as a suppressed exception.
 */
public class TransportUnavailableException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with each transport's reason
     */
    public TransportUnavailableException(String message) {
        super(message);
    }
}
