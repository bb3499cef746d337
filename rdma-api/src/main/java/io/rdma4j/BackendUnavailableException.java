package io.rdma4j;

/**
 * A manager could not start because no transport could run: none was available
 * ({@code "no RDMA backend available"}), or every available one failed to open
 * ({@code "all available RDMA backends failed to initialize"}). The message lists each
 * transport's reason; each open failure is also attached as a suppressed exception.
 */
public class BackendUnavailableException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed, with each transport's reason
     */
    public BackendUnavailableException(String message) {
        super(message);
    }
}
