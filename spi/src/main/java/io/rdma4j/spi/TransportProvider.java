package io.rdma4j.spi;

import java.util.List;

/**
 * Entry point of a transport, found by {@link java.util.ServiceLoader}.
 *
 * <p>Constructors must be cheap and free of side effects: a host without the transport's
 * native library must still be able to instantiate every provider. Native loading waits until
 * {@link #availability}.
 *
 * <p>The manager calls, in this order: {@link #settings()} (every provider, to validate the
 * whole configuration), {@link #availability} and, when available, {@link #open}.
 */
public interface TransportProvider {

    /**
     * The transport's stable name: lower case, {@code [a-z0-9_-]{1,32}}, e.g. {@code "tcp"}. It
     * keys the transport's context inside a token, so it must not change between versions.
     *
     * @return the transport's name
     */
    String name();

    /**
     * Routing order: the manager tries providers by descending priority, so the fastest
     * transport (verbs: 200) comes before the fallback (TCP: 100).
     *
     * @return the priority; higher is tried first
     */
    int priority();

    /**
     * The settings this provider reads; all are validated when a manager starts. Default: none.
     *
     * @return the declared settings, never {@code null}
     */
    default List<Setting<?>> settings() {
        return List.of();
    }

    /**
     * Whether the transport can run here, under {@code settings}; computed from real probes
     * (library loadable, device present) and configuration (disabled by a flag). Must not throw.
     *
     * @param settings the manager's validated settings, this provider's own included
     * @return whether {@link #open} may be called and, when not, why
     */
    Availability availability(Settings settings);

    /**
     * Opens the transport for one manager. Returns once the transport is fully initialised (its
     * listeners bound, its devices opened): the manager reports itself ready only after every
     * transport it opened returned from here.
     *
     * @param context what the manager provides: settings, its registrations, the control channel,
     *                the hosts to bind and advertise
     * @return the opened transport; from now on the manager owns it and closes it
     * @throws Exception any failure; the manager logs it, skips this transport and, when no
     *                   transport opens, reports it in its start error
     */
    Transport open(TransportContext context) throws Exception;
}
