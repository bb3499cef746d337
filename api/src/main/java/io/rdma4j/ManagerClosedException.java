package io.rdma4j;

/** The manager was closed before, or while, the operation ran. */
public class ManagerClosedException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message which manager is closed
     */
    public ManagerClosedException(String message) {
        super(message);
    }
}
