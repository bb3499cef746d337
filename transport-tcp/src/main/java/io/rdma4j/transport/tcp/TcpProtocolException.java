package io.rdma4j.transport.tcp;

import java.io.IOException;

/** The other end sent something this protocol does not allow; the connection must be closed. */
final class TcpProtocolException extends IOException {

    private static final long serialVersionUID = 1L;

    TcpProtocolException(String message) {
        super(message);
    }
}
