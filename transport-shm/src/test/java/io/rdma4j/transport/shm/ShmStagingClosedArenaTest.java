package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;

/**
 * {@link ShmClosedArenaTest} with the holder going through the owner's staging copy: the owner
 * refuses to copy memory whose arena was closed, read or write, as a TCP owner does.
 */
class ShmStagingClosedArenaTest extends ShmClosedArenaTest {

    @Override
    RdmaManager holder() {
        return managers.track(RdmaManager.newBuilder().isolated().providers(java.util.List.of(new ShmTransportProvider()))
                .set(ShmSettings.FORCE_STAGING.key(), "true").build());
    }
}
