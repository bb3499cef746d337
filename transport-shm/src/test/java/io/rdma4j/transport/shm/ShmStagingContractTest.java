package io.rdma4j.transport.shm;

import io.rdma4j.contract.TransportContractTest;
import io.rdma4j.spi.TransportProvider;

import java.util.Map;

/**
 * The shm transport's staging path runs the transport contract: every buffer of the other
 * manager goes through its owner's staging copy ({@code rdma.shm.forceStaging=true}), as
 * register()ed memory does where cross-memory attach is not permitted (Yama 1 or 2).
 */
class ShmStagingContractTest extends TransportContractTest {

    @Override
    protected TransportProvider provider() {
        return new ShmTransportProvider();
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of(ShmSettings.FORCE_STAGING.key(), "true");
    }
}
