package io.rdma4j.transport.ibverbs;

import io.rdma4j.contract.TransportContractTest;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Tag;

import java.util.Map;

/**
 * The transport contract again, with ops striped across four queue pairs per peer from 64 KiB
 * on, at most four work requests in flight per queue pair (so that ops wait for credits), and no
 * busy polling (so that every completion wakes the poller from the completion channel).
 */
@Tag("softroce")
class VerbsStripedContractVmTest extends TransportContractTest {

    @Override
    protected TransportProvider provider() {
        return new VerbsTransportProvider();
    }

    @Override
    protected Map<String, String> settings() {
        return Map.of(VerbsSettings.QPS_PER_PEER.key(), "4", VerbsSettings.MIN_STRIPE_KIB.key(), "64",
                VerbsSettings.QUEUE_DEPTH.key(), "4", VerbsSettings.BUSY_POLL_WINDOW.key(), "0");
    }
}
