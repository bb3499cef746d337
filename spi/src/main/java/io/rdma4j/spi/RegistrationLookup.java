package io.rdma4j.spi;

/**
 * Read-only view of the manager's registrations, for transports serving remote requests.
 * Safe to call from any thread; never blocks on the registration thread.
 */
public interface RegistrationLookup {

    /** Length of a manager incarnation, in bytes. */
    int INCARNATION_BYTES = 16;

    /**
     * Finds buffer {@code bufferId}, checks everything the requester presented, and checks that the
     * range lies inside the buffer. Checks run in this order: incarnation, then id and access key
     * (compared in constant time; an unknown id costs the same comparison), then the range.
     *
     * @param incarnation the owner incarnation the token names, {@value #INCARNATION_BYTES} bytes
     * @param bufferId    the id from the token
     * @param accessKey   the 16-byte access key from the token
     * @param offset      first byte of the range the request touches
     * @param length      bytes the request touches, at least 1
     * @return the buffer; pin it before touching its memory
     * @throws BufferAccessException {@link BufferAccessException.Reason#STALE} when the token names
     *                               another incarnation of this manager's endpoint;
     *                               {@link BufferAccessException.Reason#DENIED} when the id was never
     *                               assigned, was released, or the key does not match (one message
     *                               for all three); {@link BufferAccessException.Reason#OUT_OF_RANGE}
     *                               when the range does not lie inside the buffer
     */
    LocalBuffer lookup(byte[] incarnation, long bufferId, byte[] accessKey, long offset, long length);

    /**
     * This manager's incarnation, for transports that check it themselves.
     *
     * @return a copy of the {@value #INCARNATION_BYTES} incarnation bytes
     */
    byte[] incarnation();
}
