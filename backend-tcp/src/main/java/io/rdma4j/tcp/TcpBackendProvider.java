package io.rdma4j.tcp;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Backend;
import io.rdma4j.spi.BackendContext;
import io.rdma4j.spi.BackendProvider;
import io.rdma4j.spi.Settings;

/** PLACEHOLDER: replaced by the TCP backend work. */
public final class TcpBackendProvider implements BackendProvider {
    @Override
    public String name() {
        return "tcp";
    }

    @Override
    public int priority() {
        return 100;
    }

    @Override
    public Availability availability(Settings settings) {
        return Availability.unavailable("not implemented yet");
    }

    @Override
    public Backend open(BackendContext context) {
        throw new UnsupportedOperationException();
    }
}
