package io.rdma4j.transport.tcp;

import io.rdma4j.contract.TransportContractTest;
import io.rdma4j.spi.TransportProvider;

import java.util.Map;

/** The TCP transport runs the transport contract, with 1 MiB chunks so that multi-chunk paths run too. */
class TcpContractTest extends TransportContractTest {

    @Override
    protected TransportProvider provider() {
        return new TcpTransportProvider();
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of("rdma.tcp.maxChunkMiB", "1");
    }
}
