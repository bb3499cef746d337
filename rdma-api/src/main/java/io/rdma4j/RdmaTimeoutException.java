package io.rdma4j;

/** A deadline passed before the operation finished. The message names the peer and the op. */
public class RdmaTimeoutException extends RdmaException {

    private static final long serialVersionUID = 1L;

    public RdmaTimeoutException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
