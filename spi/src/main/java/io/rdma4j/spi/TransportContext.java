package io.rdma4j.spi;

/**
 * What the manager hands a transport when opening it: settings, its registrations, the control
 * channel, the hosts to bind and advertise, and the manager's shared clock and watchdog (a
 * transport starts no timer thread of its own).
 */
public interface TransportContext {

    /**
     * The validated settings of the whole manager.
     *
     * @return the settings, every declared one already parsed
     */
    Settings settings();

    /**
     * Read-only view of this manager's registrations, for serving remote requests.
     *
     * @return the lookup of this manager's buffers by id and access key
     */
    RegistrationLookup registrations();

    /**
     * Messages to and from the same transport in peer managers.
     *
     * @return this transport's control channel
     */
    ControlChannel control();

    /**
     * This manager's control endpoint as peers see it (the address put into tokens).
     *
     * @return the advertised control endpoint
     */
    Endpoint controlEndpoint();

    /**
     * The host name or address this manager advertises to peers; transports advertise their own
     * listeners under the same host.
     *
     * @return the advertised host name or address
     */
    String advertisedHost();

    /**
     * The local address transports bind their listeners to ({@code 0.0.0.0}, {@code 127.0.0.1},
     * an interface address).
     *
     * @return the bind address, as text
     */
    String bindHost();

    /**
     * The manager's clock; deadlines handed to the transport run on it.
     *
     * @return the clock, {@link NanoClock#SYSTEM} outside tests
     */
    NanoClock clock();

    /**
     * The manager's one deadline watchdog, shared by the manager and every transport: arm a guard
     * to bound blocking work (close the channel when the deadline passes). The manager closes it
     * after every transport closed.
     *
     * @return the shared watchdog
     */
    Watchdog watchdog();

    /**
     * This manager's incarnation: tokens it issues carry it, and requests that name another are
     * refused as stale.
     *
     * @return a copy of the {@value RegistrationLookup#INCARNATION_BYTES} bytes
     */
    default byte[] incarnation() {
        return registrations().incarnation();
    }
}
