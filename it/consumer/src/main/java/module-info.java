/** The consumer check on the module path: needs nothing but the API module. */
module io.rdma4j.consumer {
    requires io.rdma4j;
}
