package io.rdma4j.tcp;

/** The owner answered a request with ERROR: its code ({@link TcpProtocol}) and text. */
final class TcpRefusedException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int code;

    TcpRefusedException(int code, String text) {
        super(text, null, false, false);
        this.code = code;
    }

    int code() {
        return code;
    }
}
