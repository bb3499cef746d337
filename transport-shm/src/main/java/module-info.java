/** Same-host transport for rdma4j: one-sided copies between processes of one machine, through the FFM API. */
module io.rdma4j.transport.shm {
    requires io.rdma4j.spi;
    requires io.rdma4j.unix;

    provides io.rdma4j.spi.TransportProvider with io.rdma4j.transport.shm.ShmTransportProvider;
}
