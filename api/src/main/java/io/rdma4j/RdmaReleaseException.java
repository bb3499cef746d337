package io.rdma4j;

import java.util.Map;

/**
 * Releasing a buffer failed on one or more transports ({@code RDMA release failed on n transport(s):}).
 * The buffer is released anyway: it is gone from the manager and no later access succeeds.
 */
public class RdmaReleaseException extends MultiTransportException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param failures each failing transport's error, keyed by transport name, in priority order
     */
    public RdmaReleaseException(Map<String, ? extends Throwable> failures) {
        super("RDMA release", failures);
    }
}
