package io.rdma4j.bench.cli;

/** A bad command line; rdma-perf prints the message on one line and exits with {@link #EXIT_CODE}. */
public final class UsageException extends Exception {

    /** The exit code for a bad command line. */
    public static final int EXIT_CODE = 2;

    private static final long serialVersionUID = 1L;

    /** @param message one line naming the argument at fault */
    public UsageException(String message) {
        super(message);
    }
}
