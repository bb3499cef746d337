package io.rdma4j.spi;

/**
 * What the manager hands a transport when opening it.
 */
public interface BackendContext {

    /** The validated settings of the whole manager. */
    Settings settings();

    /** Read-only view of this manager's registrations, for serving remote requests. */
    RegistrationLookup registrations();

    /** Messages to and from the same transport in peer managers. */
    ControlChannel control();

    /** This manager's control endpoint as peers see it (the address put into tokens). */
    Endpoint controlEndpoint();

    /**
     * The host name or address this manager advertises to peers; transports advertise their own
     * listeners under the same host.
     */
    String advertisedHost();

    /**
     * The local address transports bind their listeners to ({@code 0.0.0.0}, {@code 127.0.0.1},
     * an interface address).
     */
    String bindHost();
}
