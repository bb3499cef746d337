package io.rdma4j;

/**
 * The owner of a remote buffer refused the access: the buffer is unknown or released, the
 * access key is wrong, the range is outside the buffer, or the owner's memory was freed.
 */
public class RemoteAccessException extends RdmaException {

    private static final long serialVersionUID = 1L;

    public RemoteAccessException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
