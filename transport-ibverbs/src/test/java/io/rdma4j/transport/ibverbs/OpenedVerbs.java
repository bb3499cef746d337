package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;

import java.util.List;
import java.util.Objects;

/**
 * The real ibverbs provider, keeping the transport it opened so that a test can look at its
 * queue pairs and pollers, and the context it was opened with. Not a double: every call goes to
 * {@link VerbsTransportProvider}.
 */
final class OpenedVerbs implements TransportProvider {

    private final VerbsTransportProvider real = new VerbsTransportProvider();
    private volatile VerbsTransport opened;
    private volatile TransportContext context;

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

    /** The transport this provider opened; fails when it has not opened one. */
    VerbsTransport transport() {
        return Objects.requireNonNull(opened, "the ibverbs transport was not opened");
    }

    /** The context the manager opened the transport with; fails when it has not opened one. */
    TransportContext context() {
        return Objects.requireNonNull(context, "the ibverbs transport was not opened");
    }

    @Override
    public String name() {
        return real.name();
    }

    @Override
    public int priority() {
        return real.priority();
    }

    @Override
    public List<Setting<?>> settings() {
        return real.settings();
    }

    @Override
    public Availability availability(Settings settings) {
        return real.availability(settings);
    }

    @Override
    public Transport open(TransportContext context) {
        Transport t = real.open(context);
        this.context = context;
        opened = (VerbsTransport) t;
        return t;
    }
}
