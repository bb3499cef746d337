/** TCP fallback transport for rdma4j. */
module io.rdma4j.tcp {
    requires io.rdma4j.spi;
    requires com.github.benmanes.caffeine;

    provides io.rdma4j.spi.BackendProvider with io.rdma4j.tcp.TcpBackendProvider;
}
