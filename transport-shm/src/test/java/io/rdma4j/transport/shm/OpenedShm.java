package io.rdma4j.transport.shm;

import io.rdma4j.testing.KeepsOpened;

/**
 * The real shm provider, keeping the transport it opened so that a test can look at it. Not a
 * double: every call goes to {@link ShmTransportProvider}.
 */
final class OpenedShm extends KeepsOpened<ShmTransport> {

    OpenedShm() {
        super(new ShmTransportProvider(), ShmTransport.class);
    }
}
