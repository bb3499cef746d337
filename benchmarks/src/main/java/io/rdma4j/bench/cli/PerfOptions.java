package io.rdma4j.bench.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * rdma-perf's command line, parsed. Immutable; {@link #parse} is a pure function.
 *
 * @param mode        what to run
 * @param ops         ops to measure, in order ({@code write}, {@code read})
 * @param sizes       sizes in bytes, in the order given, without duplicates
 * @param iters       measured iterations per op and size; 0 means adaptive
 *                    ({@link Stats#adaptiveIterations})
 * @param warmup      warmup iterations per op and size; -1 means adaptive
 *                    ({@link Stats#warmupIterations}, by size)
 * @param parallelism value for {@code rdma.tcp.parallelism} on both sides; 0 leaves the default
 * @param chunkMiB    value for {@code rdma.tcp.maxChunkMiB} on both sides; 0 leaves the default
 * @param onCallerThread whether ops run through {@code RdmaAction.submitAndWait} (on the measuring
 *                    thread) rather than {@code submit(..).join()}
 * @param json        where to write the JSON results, or {@code null}
 * @param timeout     deadline of each op
 * @param verbose     keep the managers' INFO logging
 */
public record PerfOptions(Mode mode, List<String> ops, List<Long> sizes, int iters, int warmup, int parallelism,
                          int chunkMiB, Path json, Duration timeout, boolean verbose, boolean onCallerThread) {

    /** What the invocation asks for. */
    public enum Mode {
        /** Measure: spawn a server process and drive it (the default). */
        CLIENT,
        /** Be the server process: register buffers, print their tokens, wait for stdin to close. */
        SERVE,
        /** Print {@link #USAGE} and exit 0. */
        HELP
    }

    /** Default sizes: 8 B to 64 MiB in steps of 8x. */
    public static final List<Long> DEFAULT_SIZES = List.of(8L, 64L, 512L, 4L << 10, 32L << 10, 256L << 10, 1L << 20,
            8L << 20, 64L << 20);

    /** Default deadline of one op. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** The help text. */
    public static final String USAGE = """
            Usage: rdma-perf [options]

            Measures RDMA reads and writes between two rdma4j managers in two processes on this
            machine: it starts a server JVM, then writes to and reads from the server's buffers
            and prints one row per op and size (MB/s is 10^6 bytes per second; latencies in us;
            percentiles are nearest-rank).

            Options:
              --op read|write|both   ops to measure (default: both, writes first)
              --size LIST            comma-separated sizes; units B, KiB, MiB, GiB, any case
                                     (default: 8,64,512,4KiB,32KiB,256KiB,1MiB,8MiB,64MiB; max 1GiB)
              --iters N              measured iterations per op and size, 1..10000000
                                     (default: adaptive, enough to move 256 MiB, 10..10000)
              --warmup N             warmup iterations per op and size, 0..10000000
                                     (default: a fifth of the adaptive count, 2..1000)
              --parallelism N        rdma.tcp.parallelism on both sides, 1..64: connections
                                     one transfer spreads its chunks over (default: the
                                     transport's, 1)
              --chunk-mib N          rdma.tcp.maxChunkMiB on both sides, 1..1024: the largest
                                     chunk one request moves (default: the transport's, 64)
              --wait future|caller   how each op is awaited: future = submit(..).join(), the
                                     asynchronous API; caller = submitAndWait(..), the transfer
                                     runs on the measuring thread (default: future)
              --json FILE            also write the results to FILE as a JSON array (default: none)
              --timeout SECONDS      deadline of each op (default: 60)
              -v, --verbose          keep the managers' log output (default: warnings only)
              -h, --help             print this help and exit

            Settings (rdma.bindHost, RDMA_* variables, ...) apply to both processes as usual.
            Exit codes: 0 success, 1 the measurement failed, 2 bad command line.
            """;

    /**
     * Parses a command line. A leading {@code serve} selects the server sub-mode (used by the
     * client itself; it takes {@code --size}, {@code --parallelism}, {@code --chunk-mib} and {@code --verbose}).
     *
     * @throws UsageException with a one-line message naming the offending argument
     */
    public static PerfOptions parse(String... args) throws UsageException {
        Mode mode = Mode.CLIENT;
        int i = 0;
        if (args.length > 0 && args[0].equals("serve")) {
            mode = Mode.SERVE;
            i = 1;
        }
        List<String> ops = List.of("write", "read");
        List<Long> sizes = DEFAULT_SIZES;
        int iters = 0;
        int warmup = -1;
        int parallelism = 0;
        int chunkMiB = 0;
        Path json = null;
        Duration timeout = DEFAULT_TIMEOUT;
        boolean verbose = false;
        boolean onCallerThread = false;
        for (; i < args.length; i++) {
            String arg = args[i];
            String name = arg;
            String value = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                name = arg.substring(0, eq);
                value = arg.substring(eq + 1);
            }
            switch (name) {
                case "-h", "--help" -> {
                    noValue(name, value);
                    mode = Mode.HELP;
                }
                case "-v", "--verbose" -> {
                    noValue(name, value);
                    verbose = true;
                }
                case "--op" -> {
                    String v = value != null ? value : next(args, ++i, name);
                    ops = switch (v.toLowerCase(Locale.ROOT)) {
                        case "read" -> List.of("read");
                        case "write" -> List.of("write");
                        case "both" -> List.of("write", "read");
                        default -> throw new UsageException("--op: expected read, write or both, got '" + v + "'");
                    };
                }
                case "--size", "--sizes" -> {
                    String v = value != null ? value : next(args, ++i, name);
                    try {
                        sizes = Sizes.parseList(v);
                    } catch (IllegalArgumentException e) {
                        throw new UsageException(name + ": " + e.getMessage());
                    }
                }
                case "--wait" -> {
                    String v = value != null ? value : next(args, ++i, name);
                    onCallerThread = switch (v.toLowerCase(Locale.ROOT)) {
                        case "future" -> false;
                        case "caller" -> true;
                        default -> throw new UsageException("--wait: expected future or caller, got '" + v + "'");
                    };
                }
                case "--iters" -> iters = integer(name, value != null ? value : next(args, ++i, name), 1, 10_000_000);
                case "--warmup" -> warmup = integer(name, value != null ? value : next(args, ++i, name), 0, 10_000_000);
                case "--parallelism" -> parallelism = integer(name, value != null ? value : next(args, ++i, name), 1, 64);
                case "--chunk-mib" -> chunkMiB = integer(name, value != null ? value : next(args, ++i, name), 1, 1024);
                case "--timeout" -> timeout = Duration.ofSeconds(
                        integer(name, value != null ? value : next(args, ++i, name), 1, 86_400));
                case "--json" -> {
                    String v = value != null ? value : next(args, ++i, name);
                    if (v.isBlank()) {
                        throw new UsageException("--json: empty file name");
                    }
                    try {
                        json = Path.of(v);
                    } catch (RuntimeException e) {
                        throw new UsageException("--json: not a file name: '" + v + "'");
                    }
                }
                default -> {
                    if (arg.startsWith("-")) {
                        throw new UsageException("unknown option '" + arg + "' (see --help)");
                    }
                    throw new UsageException("unexpected argument '" + arg + "' (see --help)");
                }
            }
        }
        return new PerfOptions(mode, ops, sizes, iters, warmup, parallelism, chunkMiB, json, timeout, verbose,
                onCallerThread);
    }

    private static String next(String[] args, int i, String name) throws UsageException {
        if (i >= args.length) {
            throw new UsageException(name + ": missing value (see --help)");
        }
        return args[i];
    }

    private static void noValue(String name, String value) throws UsageException {
        if (value != null) {
            throw new UsageException("'" + name + "=" + value + "': " + name + " takes no value");
        }
    }

    private static int integer(String name, String text, int min, int max) throws UsageException {
        int v;
        try {
            v = Integer.parseInt(text.strip());
        } catch (NumberFormatException e) {
            throw new UsageException(name + ": not a whole number: '" + text + "'");
        }
        if (v < min || v > max) {
            throw new UsageException(name + ": " + v + " is out of range [" + min + ", " + max + "]");
        }
        return v;
    }

    /** Measured iterations for {@code sizeBytes}: the given count, or the adaptive one. */
    public int itersFor(long sizeBytes) {
        return iters > 0 ? iters : Stats.adaptiveIterations(sizeBytes);
    }

    /** Warmup iterations for {@code sizeBytes}: the given count, or the adaptive one. */
    public int warmupFor(long sizeBytes) {
        return warmup >= 0 ? warmup : Stats.warmupIterations(sizeBytes);
    }

    /** The largest size. */
    public long maxSize() {
        return sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
    }
}
