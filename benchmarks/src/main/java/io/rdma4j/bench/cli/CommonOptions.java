package io.rdma4j.bench.cli;

import picocli.CommandLine.Option;

/**
 * Options both sides take, {@code serve} and the measuring side: which transport and how it is
 * tuned. Filled in by picocli; read-only afterwards.
 */
final class CommonOptions {

    @Option(names = "--transport", paramLabel = "NAME",
            description = "Run only this transport (tcp, ibverbs, ...); fails when it is not available on both sides "
                    + "(default: the fastest one both sides run)")
    String transport;

    @Option(names = "--parallelism", paramLabel = "N", converter = Ints.Parallelism.class,
            description = "rdma.tcp.parallelism: connections one TCP transfer spreads its chunks over, 1..64 "
                    + "(default: the transport's, 1)")
    int parallelism;

    @Option(names = "--chunk-mib", paramLabel = "N", converter = Ints.ChunkMiB.class,
            description = "rdma.tcp.maxChunkMiB: the largest chunk one TCP request moves, 1..1024 (default: the transport's, 64)")
    int chunkMiB;

    @Option(names = {"-v", "--verbose"}, description = "Keep the managers' log output (default: warnings only)")
    boolean verbose;

    /** Arguments that hand these options on to a server process. */
    java.util.List<String> toArgs() {
        java.util.List<String> args = new java.util.ArrayList<>();
        if (transport != null) {
            args.add("--transport=" + transport);
        }
        if (parallelism > 0) {
            args.add("--parallelism=" + parallelism);
        }
        if (chunkMiB > 0) {
            args.add("--chunk-mib=" + chunkMiB);
        }
        if (verbose) {
            args.add("--verbose");
        }
        return args;
    }

    /** Keeps the managers' INFO chatter off stderr, where the progress line lives. */
    void applyLogging() {
        if (!verbose) {
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        }
    }
}
