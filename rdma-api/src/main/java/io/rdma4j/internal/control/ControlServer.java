package io.rdma4j.internal.control;

import java.io.IOException;
import java.net.InetSocketAddress;

/** SKELETON: to be implemented (control-plane helper). Listens on the manager's control endpoint. */
public final class ControlServer implements AutoCloseable {

    private ControlServer() {
    }

    /** Binds {@code bindHost:port} (0 = ephemeral) and starts serving {@code service}. */
    public static ControlServer start(String bindHost, int port, ControlService service) throws IOException {
        throw new UnsupportedOperationException("not yet");
    }

    /** The bound address (its port is the real one when 0 was asked). */
    public InetSocketAddress localAddress() {
        throw new UnsupportedOperationException("not yet");
    }

    /** Stops listening, closes every connection, waits for handler threads. Idempotent. */
    @Override
    public void close() {
    }
}
