package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Endpoint;

/**
 * A control service for endpoint tests: always ready, releases nothing, and answers every
 * transport request with its own payload.
 */
final class EchoService implements ControlService {

    static final EchoService INSTANCE = new EchoService();

    private EchoService() {
    }

    @Override
    public void release(byte[] incarnation, long bufferId, byte[] accessKey) {
    }

    @Override
    public PeerReadiness readiness() {
        return new PeerReadiness(new Endpoint("127.0.0.1", 1), PeerReadiness.State.READY, "");
    }

    @Override
    public byte[] transportRequest(String transport, Endpoint from, byte[] payload) {
        return payload;
    }
}
