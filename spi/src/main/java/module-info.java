/**
 * The contract between the {@code RdmaManager} and a transport. A transport ships a
 * {@link io.rdma4j.spi.TransportProvider} (declared with {@code provides} and in
 * {@code META-INF/services}); the manager discovers it with {@link java.util.ServiceLoader}.
 */
module io.rdma4j.spi {
    exports io.rdma4j.spi;
}
