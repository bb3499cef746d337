package io.rdma4j.spi;

/**
 * Read-only view of the manager's registrations, for transports serving remote requests.
 * Safe to call from any thread; never blocks on the registration thread.
 */
public interface RegistrationLookup {

    /**
     * Finds buffer {@code bufferId} and checks the secret the requester presented.
     *
     * @param bufferId  the id from the token
     * @param accessKey the 16-byte access key from the token
     * @return the buffer; pin it before touching its memory
     * @throws BufferAccessException if the id was never assigned, was released, or the key does
     *                               not match (compared in constant time)
     */
    LocalBuffer lookup(long bufferId, byte[] accessKey);
}
