package io.rdma4j;

import java.util.Map;

/**
 * An {@link RdmaAction} failed on one or more transports ({@code RDMA submit failed on n transport(s):}).
 * Ops routed to other transports may have completed.
 */
public class RdmaSubmitException extends MultiTransportException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param failures each failing transport's error, keyed by transport name, in priority order
     */
    public RdmaSubmitException(Map<String, ? extends Throwable> failures) {
        super("RDMA submit", failures);
    }
}
