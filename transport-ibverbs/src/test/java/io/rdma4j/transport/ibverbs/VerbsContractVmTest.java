package io.rdma4j.transport.ibverbs;

import io.rdma4j.contract.TransportContractTest;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Tag;

/**
 * The verbs transport runs the transport contract unchanged, on the soft-RoCE devices of the VM
 * (both managers in this JVM, on the device each chooses).
 */
@Tag("softroce")
class VerbsContractVmTest extends TransportContractTest {

    @Override
    protected TransportProvider provider() {
        return new VerbsTransportProvider();
    }
}
