package io.rdma4j.transport.shm;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;

import java.io.IOException;
import java.util.List;
import java.util.Objects;

/**
 * The real shm provider, keeping the transport it opened so that a test can look at it. Not a
 * double: every call goes to {@link ShmTransportProvider}.
 */
final class OpenedShm implements TransportProvider {

    private final ShmTransportProvider real = new ShmTransportProvider();
    private volatile ShmTransport opened;

    /** The transport this provider opened; fails when it has not opened one. */
    ShmTransport transport() {
        return Objects.requireNonNull(opened, "the shm transport was not opened");
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
    public Transport open(TransportContext context) throws IOException {
        Transport t = real.open(context);
        opened = (ShmTransport) t;
        return t;
    }
}
