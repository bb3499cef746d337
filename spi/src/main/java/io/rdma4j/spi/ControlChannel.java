package io.rdma4j.spi;

import java.util.concurrent.CompletableFuture;

/**
 * Request/reply messages between a transport and its counterpart in a peer manager, carried
 * over the managers' control endpoints and routed by transport name. The verbs transport uses
 * it for its queue-pair handshake; TCP may not need it.
 *
 * <p>Payloads are opaque to the manager and bounded by {@link #MAX_PAYLOAD_BYTES}.
 */
public interface ControlChannel {

    /** Largest request or reply payload. */
    int MAX_PAYLOAD_BYTES = 1 << 20;

    /**
     * Installs the handler for requests that peers address to this transport. At most one;
     * call it from {@link TransportProvider#open}. The handler runs on a virtual thread, may block
     * briefly, and returns the reply payload; an exception it throws is sent back to the
     * requester as an error carrying its message.
     *
     * @param handler the handler of this transport's incoming requests; not {@code null}
     * @throws IllegalStateException if this transport already installed a handler
     */
    void onRequest(Handler handler);

    /**
     * Sends {@code payload} to the same transport in the manager listening at {@code peer}.
     *
     * @param peer     the peer manager's control endpoint
     * @param payload  the request, opaque to the manager, at most {@link #MAX_PAYLOAD_BYTES} bytes
     * @param deadline when the reply must have arrived
     * @return the reply payload; fails with a {@link TransportException} of kind
     *         {@link TransportException.Kind#TIMEOUT} after {@code deadline},
     *         {@link TransportException.Kind#PEER_UNREACHABLE} when the peer cannot be reached,
     *         {@link TransportException.Kind#REMOTE_ACCESS} carrying the remote handler's error
     * @throws IllegalArgumentException if {@code payload} is larger than {@link #MAX_PAYLOAD_BYTES}
     */
    CompletableFuture<byte[]> request(Endpoint peer, byte[] payload, Deadline deadline);

    /** Handles one request from a peer. */
    @FunctionalInterface
    interface Handler {
        /**
         * Handles one request and returns the reply.
         *
         * @param from    the requesting manager's control endpoint, as it advertises it
         * @param payload the request
         * @return the reply
         * @throws Exception any failure; its message is sent back to the requester as an error
         */
        byte[] handle(Endpoint from, byte[] payload) throws Exception;
    }
}
