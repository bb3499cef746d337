package io.rdma4j;

/** A peer could not be reached, or the connection to it broke mid-operation. */
public class PeerUnreachableException extends RdmaException {

    private static final long serialVersionUID = 1L;

    public PeerUnreachableException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
