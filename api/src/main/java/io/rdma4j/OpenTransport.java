package io.rdma4j;

import io.rdma4j.internal.LocalMemoryCache;
import io.rdma4j.spi.Transport;

/**
 * A transport a manager opened, with its priority rank and, when it prepares local memory, the
 * cache of what it prepared.
 *
 * @param name      the provider's name, which keys its context in tokens
 * @param transport the opened transport; the manager closes it
 * @param local     the cache of prepared local memory, or {@code null} when the transport prepares none
 */
record OpenTransport(String name, Transport transport, LocalMemoryCache local) {

    static OpenTransport of(String name, Transport transport, long localCacheEntries) {
        return new OpenTransport(name, transport,
                transport.preparesLocalMemory() ? new LocalMemoryCache(transport, localCacheEntries) : null);
    }
}
