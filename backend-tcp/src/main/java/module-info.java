/**
 * TCP fallback transport for rdma4j. Exports only {@code io.rdma4j.tcp}, whose public types are
 * the provider and the settings; everything else in it is package-private.
 */
module io.rdma4j.tcp {
    requires io.rdma4j.spi;
    requires com.github.benmanes.caffeine;

    exports io.rdma4j.tcp;

    provides io.rdma4j.spi.TransportProvider with io.rdma4j.tcp.TcpTransportProvider;
}
