package io.rdma4j.testing;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.spi.Settings;

/**
 * A {@link StubProvider} that {@link java.util.ServiceLoader} finds on api's test class path
 * (listed in {@code META-INF/services}), so that discovery and {@code RdmaManager.shared()} can be
 * tested without a real transport. Named {@code "stub-discovered"}.
 */
public final class DiscoverableStubProvider implements TransportProvider {

    private final StubProvider delegate = new StubProvider("stub-discovered", 1);

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public int priority() {
        return delegate.priority();
    }

    @Override
    public Availability availability(Settings settings) {
        return delegate.availability(settings);
    }

    @Override
    public Transport open(TransportContext context) throws Exception {
        return delegate.open(context);
    }
}
