package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;

/**
 * {@link ShmAccessKeyTest} with the holder going through the owner's staging copy: the owner
 * checks the key of every request, so a token with another key is refused after a good one.
 */
class ShmStagingAccessKeyTest extends ShmAccessKeyTest {

    @Override
    RdmaManager holder() {
        return managers.track(RdmaManager.newBuilder().isolated().providers(java.util.List.of(new ShmTransportProvider()))
                .set(ShmSettings.FORCE_STAGING.key(), "true").build());
    }
}
