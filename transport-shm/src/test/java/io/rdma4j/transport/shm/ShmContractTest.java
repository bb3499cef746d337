package io.rdma4j.transport.shm;

import io.rdma4j.contract.TransportContractTest;
import io.rdma4j.spi.TransportProvider;

/** The shm transport runs the transport contract (owner and holder are two managers of this JVM). */
class ShmContractTest extends TransportContractTest {

    @Override
    protected TransportProvider provider() {
        return new ShmTransportProvider();
    }
}
