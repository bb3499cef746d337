package io.rdma4j.testing;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A real transport provider that keeps the transport it opened, and the context it opened it
 * with, so that a test can look at them. Not a double: every call goes to the wrapped provider.
 *
 * @param <T> the transport's class
 */
public class KeepsOpened<T extends Transport> implements TransportProvider {

    private final TransportProvider real;
    private final Class<T> type;
    private final CompletableFuture<T> first = new CompletableFuture<>();
    private volatile T last;
    private volatile TransportContext context;

    public KeepsOpened(TransportProvider real, Class<T> type) {
        this.real = Objects.requireNonNull(real, "real");
        this.type = Objects.requireNonNull(type, "type");
    }

    /** The transport this provider opened last; fails when it has not opened one. */
    public T transport() {
        return Objects.requireNonNull(last, () -> "the " + real.name() + " transport was not opened");
    }

    /** Completes with the first transport this provider opens. */
    public CompletableFuture<T> opened() {
        return first;
    }

    /** The context of the last open; fails when it has not opened one. */
    public TransportContext context() {
        return Objects.requireNonNull(context, () -> "the " + real.name() + " transport was not opened");
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
    public Transport open(TransportContext context) throws Exception {
        Transport t = real.open(context);
        T typed = type.cast(t);
        this.context = context;
        last = typed;
        first.complete(typed);
        return t;
    }
}
