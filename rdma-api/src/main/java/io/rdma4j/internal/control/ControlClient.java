package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;

import java.util.concurrent.CompletableFuture;

/** SKELETON: to be implemented (control-plane helper). Talks to peers' control endpoints. */
public final class ControlClient implements AutoCloseable {

    /** @param self this manager's advertised control endpoint, sent as the requester of backend requests */
    public ControlClient(Endpoint self) {
    }

    /** Remote release; fails with a TransportException (REMOTE_ACCESS, PEER_UNREACHABLE, TIMEOUT, PROTOCOL). */
    public CompletableFuture<Void> release(Endpoint peer, long bufferId, byte[] accessKey, Deadline deadline) {
        throw new UnsupportedOperationException("not yet");
    }

    /** Never fails: an unreachable peer yields {@link PeerReadiness.State#UNREACHABLE}. */
    public CompletableFuture<PeerReadiness> readiness(Endpoint peer, Deadline deadline) {
        throw new UnsupportedOperationException("not yet");
    }

    /** A backend request; fails with a TransportException. */
    public CompletableFuture<byte[]> backendRequest(Endpoint peer, String backend, byte[] payload, Deadline deadline) {
        throw new UnsupportedOperationException("not yet");
    }

    @Override
    public void close() {
    }
}
