/**
 * TCP fallback transport for rdma4j. Exports only {@code io.rdma4j.transport.tcp}, whose public types are
 * the provider and the settings; everything else in it is package-private.
 */
module io.rdma4j.transport.tcp {
    requires io.rdma4j.spi;
    requires com.github.benmanes.caffeine;

    exports io.rdma4j.transport.tcp;

    provides io.rdma4j.spi.TransportProvider with io.rdma4j.transport.tcp.TcpTransportProvider;
}
