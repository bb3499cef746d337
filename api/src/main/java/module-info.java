/**
 * The rdma4j API: {@link io.rdma4j.RdmaManager}, {@link io.rdma4j.RdmaRemoteBuffer},
 * {@link io.rdma4j.RdmaAction}. Transports are found through {@link io.rdma4j.spi.TransportProvider}.
 */
module io.rdma4j {
    requires transitive io.rdma4j.spi;
    requires com.lmax.disruptor;
    requires com.github.benmanes.caffeine;
    requires jdk.jfr;

    exports io.rdma4j;

    uses io.rdma4j.spi.TransportProvider;
}
