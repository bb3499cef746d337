package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;

import java.util.List;

/**
 * The TCP fallback transport: name {@code "tcp"}, priority 100 (after verbs). Available on every
 * host unless {@code rdma.allowTcpFallback=false}. Found by {@link java.util.ServiceLoader}; the
 * constructor does nothing.
 *
 * <p>{@link #open} binds the transport's own data endpoint on the manager's bind host (port
 * {@code rdma.tcp.dataPort}, 0 for any) and puts that endpoint, under the manager's advertised
 * host, into every token. Peers' reads and writes arrive there and are checked against the
 * manager's registrations (id, access key, range, not released) before any memory is touched.
 *
 * <p><b>Errors.</b> Transfers fail with {@link io.rdma4j.spi.TransportException}:
 * {@code TIMEOUT} when the deadline passed (the connection involved is closed),
 * {@code REMOTE_ACCESS} with the owner's reason when it refused (unknown or released buffer,
 * wrong key, range outside the buffer), {@code PEER_UNREACHABLE} when the peer cannot be
 * reached or the connection broke, {@code PROTOCOL} when the peer speaks something else,
 * {@code LOCAL_ACCESS} when the local segment went away, {@code INTERNAL} when the transport was
 * closed meanwhile. Each message names the op, the buffer and the peer's data endpoint.
 *
 * <p><b>Memory.</b> The transport owns no registered memory: the manager does, and the transport
 * touches it only under a pin, one chunk at a time. Local segments of ops belong to the caller
 * and must stay alive until the op's future completes. Bytes move between sockets and segments
 * directly, without staging copies on the Java heap.
 */
public final class TcpTransportProvider implements TransportProvider {

    /** The transport's name, also its key in tokens. */
    public static final String NAME = "tcp";
    /** Routing priority: after verbs (200). */
    public static final int PRIORITY = 100;

    private volatile TcpTransport lastOpened;

    /** Cheap and free of side effects, as {@link java.util.ServiceLoader} requires. */
    public TcpTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** {@link TcpSettings#all()}. */
    @Override
    public List<Setting<?>> settings() {
        return TcpSettings.all();
    }

    /** Available unless disabled by {@link TcpSettings#ALLOW_TCP_FALLBACK}. */
    @Override
    public Availability availability(Settings settings) {
        if (!settings.get(TcpSettings.ALLOW_TCP_FALLBACK)) {
            return Availability.unavailable("disabled by " + TcpSettings.ALLOW_TCP_FALLBACK.key() + "=false");
        }
        return Availability.available();
    }

    /**
     * Binds the data endpoint and starts serving it.
     *
     * @throws java.io.IOException when the endpoint cannot be bound (address in use, bad bind host)
     */
    @Override
    public Transport open(TransportContext context) throws Exception {
        TcpTransport backend = TcpTransport.open(context);
        lastOpened = backend;
        return backend;
    }

    /** The backend this provider instance opened last, for tests. */
    TcpTransport lastOpened() {
        return lastOpened;
    }
}
