package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.testing.KeepsOpened;

import java.util.List;

/**
 * The real ibverbs provider, keeping the transport it opened so that a test can look at its
 * queue pairs and pollers, and the context it was opened with. Not a double: every call goes to
 * {@link VerbsTransportProvider}.
 */
final class OpenedVerbs extends KeepsOpened<VerbsTransport> {

    OpenedVerbs() {
        super(new VerbsTransportProvider(), VerbsTransport.class);
    }

    /**
     * A builder of an isolated manager whose only provider is this one, aimed at {@code device}
     * ({@code rdma.ibverbs.target=nic:<device>}), with {@code settings} ({@code key=value}) on top.
     */
    RdmaManagerBuilder builder(String device, String... settings) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(List.of(this))
                .set(VerbsSettings.TARGET.key(), "nic:" + device);
        for (String s : settings) {
            int eq = s.indexOf('=');
            b.set(s.substring(0, eq), s.substring(eq + 1));
        }
        return b;
    }
}
