package io.rdma4j;

/**
 * The owner of a remote buffer refused the access: the buffer is unknown or released, or the
 * access key is wrong (one message for the three, so that a token's holder learns nothing about
 * other buffers), the range is outside the buffer, the owner's memory was freed, the request was a
 * write into a buffer its owner registered read-only (the message says "is read-only"; nothing was
 * written), or the token is stale ({@link StaleTokenException}).
 */
public class RemoteAccessException extends RdmaException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param transport the transport that carried the request, or {@code null}
     * @param message the owner's reason for refusing
     * @param cause   the original error, or {@code null}
     */
    public RemoteAccessException(String transport, String message, Throwable cause) {
        super(transport, message, cause);
    }
}
