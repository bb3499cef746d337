/** Same-host transport for rdma4j: one-sided copies between processes of one machine, through the FFM API. */
module io.rdma4j.shm {
    requires io.rdma4j.spi;
}
