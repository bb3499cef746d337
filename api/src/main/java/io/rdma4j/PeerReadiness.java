package io.rdma4j;

import io.rdma4j.spi.Endpoint;

import java.util.Objects;

/**
 * What a peer manager answered to a readiness probe ({@link RdmaManager#probeReadiness}).
 *
 * @param peer   the control endpoint that was probed
 * @param state  the answer
 * @param detail the peer's start error for {@link State#FAILED}, why it could not be reached for
 *               {@link State#UNREACHABLE}, what it is still doing for {@link State#STARTING};
 *               empty for {@link State#READY}
 */
public record PeerReadiness(Endpoint peer, State state, String detail) {

    /**
     * Checks that every component is present.
     *
     * @param peer   the control endpoint that was probed
     * @param state  the answer
     * @param detail the peer's start error for {@link State#FAILED}, why it could not be reached for
     *               {@link State#UNREACHABLE}, what it is still doing for {@link State#STARTING};
     *               empty for {@link State#READY}
     * @throws NullPointerException if any component is {@code null}
     */
    public PeerReadiness {
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(detail, "detail");
    }

    /** The possible answers. */
    public enum State {
        /** The peer's manager opened every transport it could and serves requests. */
        READY,
        /** The peer's manager is still opening its transports; the probe's deadline passed first. */
        STARTING,
        /** The peer's manager failed to start; {@code detail} carries its error. */
        FAILED,
        /** Nothing answered at the endpoint before the deadline, or it did not speak the protocol. */
        UNREACHABLE
    }

    /**
     * Whether the peer is ready.
     *
     * @return {@code true} if {@link #state()} is {@link State#READY}
     */
    public boolean isReady() {
        return state == State.READY;
    }
}
