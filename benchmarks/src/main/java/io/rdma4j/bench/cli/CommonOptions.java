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

    @Option(names = "--memory", paramLabel = "allocate|register", converter = MemoryConverter.class,
            description = "What the server measures against: one RdmaManager.allocate()d buffer (shm hands it over as a "
                    + "memory file, which holders map), or a segment of its own arena that it register()s (shm reaches it "
                    + "by cross-memory attach or the owner's staging copy) (default: allocate)")
    Memory memory = Memory.ALLOCATE;

    /** The server's buffer: allocated by the manager, or the server's own memory registered. */
    enum Memory {
        ALLOCATE, REGISTER;

        @Override
        public String toString() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    static final class MemoryConverter implements picocli.CommandLine.ITypeConverter<Memory> {
        @Override
        public Memory convert(String value) {
            return switch (value.toLowerCase(java.util.Locale.ROOT)) {
                case "allocate" -> Memory.ALLOCATE;
                case "register" -> Memory.REGISTER;
                default -> throw new picocli.CommandLine.TypeConversionException("expected allocate or register, got '"
                        + value + "'");
            };
        }
    }

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
        if (memory != Memory.ALLOCATE) {
            args.add("--memory=" + memory);
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
