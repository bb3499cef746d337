package io.rdma4j.spi;

import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * A host and port as advertised on the wire (in tokens and handshakes). The host is kept as
 * text, unresolved, so that a name given by configuration survives the trip to another host.
 *
 * @param host a host name or literal address, 1..255 bytes of UTF-8
 * @param port 1..65535
 */
public record Endpoint(String host, int port) {

    /**
     * Validates the components.
     *
     * @param host a host name or literal address, 1..255 bytes of UTF-8
     * @param port 1..65535
     * @throws NullPointerException     if {@code host} is {@code null}
     * @throws IllegalArgumentException if {@code host} is empty or longer than 255 characters, or
     *                                  {@code port} is outside 1..65535
     */
    public Endpoint {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty() || host.length() > 255) {
            throw new IllegalArgumentException("endpoint host must be 1..255 characters: '" + host + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint port must be 1..65535: " + port);
        }
    }

    /**
     * The endpoint as an unresolved socket address, ready for {@code connect}.
     *
     * @return a new unresolved address for {@code host} and {@code port}
     */
    public InetSocketAddress toSocketAddress() {
        return InetSocketAddress.createUnresolved(host, port);
    }

    /**
     * Parses {@code host:port} or {@code [v6-literal]:port}.
     *
     * @param text the endpoint as {@link #toString()} writes it
     * @return the endpoint; brackets around an IPv6 literal are dropped from its host
     * @throws IllegalArgumentException naming the text when it is not of that form
     */
    public static Endpoint parse(String text) {
        Objects.requireNonNull(text, "text");
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon == text.length() - 1) {
            throw new IllegalArgumentException("expected host:port, got '" + text + "'");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("expected host:port, got '" + text + "'", e);
        }
        return new Endpoint(host, port);
    }

    @Override
    public String toString() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }
}
