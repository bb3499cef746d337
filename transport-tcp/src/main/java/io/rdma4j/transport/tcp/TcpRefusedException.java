package io.rdma4j.transport.tcp;

/** The owner answered a request with ERROR: its code ({@link TcpProtocol}) and text. */
final class TcpRefusedException extends Exception {

    private static final long serialVersionUID = 1L;

    private final int code;
    private int opIndex = -1;

    TcpRefusedException(int code, String text) {
        super(text, null, false, false);
        this.code = code;
    }

    /** Notes which op of a pipelined round was refused; returns this. */
    TcpRefusedException at(int index) {
        opIndex = index;
        return this;
    }

    /** The index of the refused op in its submit, for a pipelined round; -1 otherwise. */
    int opIndex() {
        return opIndex;
    }

    int code() {
        return code;
    }
}
