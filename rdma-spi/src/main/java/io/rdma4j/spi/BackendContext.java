package io.rdma4j.spi;

/**
 * What the manager hands a transport when opening it.
 */
public interface BackendContext {

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
}
