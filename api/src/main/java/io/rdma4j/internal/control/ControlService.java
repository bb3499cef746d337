package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.spi.Endpoint;

/**
 * What a manager offers on its control endpoint. Implemented by the manager; called by
 * {@link ControlServer} on virtual threads, concurrently.
 */
public interface ControlService {

    /**
     * Releases a buffer for a remote holder.
     *
     * @throws io.rdma4j.spi.BufferAccessException when the token is stale, or names an unknown or
     *                                              released buffer or the wrong key (the server
     *                                              replies the matching {@link io.rdma4j.spi.ErrorCode})
     * @throws io.rdma4j.RdmaReleaseException       when a transport failed to release it
     * @throws Exception                            any other failure; its message is sent back
     */
    void release(byte[] incarnation, long bufferId, byte[] accessKey) throws Exception;

    /**
     * The manager's state: {@link PeerReadiness.State#READY}, {@link PeerReadiness.State#STARTING}
     * or {@link PeerReadiness.State#FAILED} with the error text. The {@code peer} field is ignored.
     */
    PeerReadiness readiness();

    /**
     * Routes a request to the named transport's {@link io.rdma4j.spi.ControlChannel.Handler}.
     *
     * @throws Exception when there is no such transport or its handler failed; the message is sent back
     */
    byte[] transportRequest(String transport, Endpoint from, byte[] payload) throws Exception;
}
