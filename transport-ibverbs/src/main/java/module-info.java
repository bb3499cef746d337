/** RDMA verbs transport for rdma4j, over libibverbs through the FFM API. */
module io.rdma4j.transport.ibverbs {
    requires io.rdma4j.spi;
    requires io.rdma4j.unix;

    provides io.rdma4j.spi.TransportProvider with io.rdma4j.transport.ibverbs.VerbsTransportProvider;
}
