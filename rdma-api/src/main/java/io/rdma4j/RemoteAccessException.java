package io.rdma4j;

/**
 * The owner of a remote buffer refused the access: the buffer is unknown or released, the
 * access key is wrong, the range is outside the buffer, or the owner's memory was freed.
 */
public class RemoteAccessException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param backend the transport that carried the request, or {@code null}
     * @param message the owner's reason for refusing
     * @param cause   the original error, or {@code null}
     */
    public RemoteAccessException(String backend, String message, Throwable cause) {
        super(backend, message, cause);
    }
}
