package io.rdma4j.bench.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the measuring side measures and where the results go. Filled in by picocli; read-only
 * afterwards. Options that are absent keep the defaults documented on each.
 */
final class RunOptions {

    /** Default sizes: 8 B to 64 MiB in steps of 8x. */
    static final List<Long> DEFAULT_SIZES = List.of(8L, 64L, 512L, 4L << 10, 32L << 10, 256L << 10, 1L << 20,
            8L << 20, 64L << 20);
    /** Default measured time per op and size. */
    static final Duration DEFAULT_DURATION = Duration.ofSeconds(2);
    /** Default deadline of one action. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** Fewest actions measured per op and size in duration mode, however long they take. */
    static final int MIN_MEASURED = 10;

    /** "-" as the JSON file: standard output. */
    static final Path STDOUT = Path.of("-");

    @Option(names = "--peer", paramLabel = "HOST:PORT", converter = PeerConverter.class,
            description = "Measure against `rdma-perf serve` at HOST:PORT (default: start one in a second process here, "
                    + "on loopback)")
    Peer peer;

    @Option(names = "--op", paramLabel = "read|write|both", converter = OpsConverter.class,
            description = "Ops to measure (default: both, writes first)")
    OpList opList = new OpList(List.of("write", "read"));

    @Option(names = {"--size", "--sizes"}, paramLabel = "LIST", converter = SizesConverter.class,
            description = "Comma-separated sizes; units B, KiB, MiB, GiB, any case "
                    + "(default: 8,64,512,4KiB,32KiB,256KiB,1MiB,8MiB,64MiB; at most 1GiB)")
    SizeList sizeList = new SizeList(DEFAULT_SIZES);

    @Option(names = "--duration", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Measured time per op and size, e.g. 500ms, 2s, 1m; at least " + MIN_MEASURED
                    + " actions are measured however long they take (default: 2s)")
    Duration duration = DEFAULT_DURATION;

    @Option(names = "--iters", paramLabel = "N", converter = Ints.Iterations.class,
            description = "Measure exactly N actions per op and size instead of --duration, 1..10000000")
    int iters;

    @Option(names = "--warmup", paramLabel = "N|TIME", converter = WarmupConverter.class,
            description = "Warmup per op and size: N actions, 0..10000000, or a time such as 5s (not with --iters) "
                    + "(default: a quarter of --duration, at most 1s; with --iters, a fifth of an adaptive count, "
                    + "2..1000)")
    Warmup warmup;

    @Option(names = "--inflight", paramLabel = "N", converter = Ints.Window.class,
            description = "Actions outstanding at once, each awaited by a thread of its own (with --wait chain, each "
                    + "a chain of submits, no thread waiting), 1..1024 (default: 1)")
    int inflight = 1;

    @Option(names = "--batch", paramLabel = "N", converter = Ints.Window.class,
            description = "Ops per action, all of the same size and buffer, 1..1024; latency is per action, "
                    + "bandwidth and message rate count every op (default: 1)")
    int batch = 1;

    @Option(names = "--wait", paramLabel = "future|caller|chain", converter = WaitConverter.class,
            description = "How an action is awaited: future = submit(..).join(), the asynchronous API; caller = "
                    + "submitAndWait(..), the transfer runs on the measuring thread; chain = no thread waits, each "
                    + "action is submitted again from its own completion, on the thread that completed it "
                    + "(default: future)")
    Wait wait = Wait.FUTURE;

    /** How an action is awaited. */
    enum Wait {
        /** {@code submit(timeout).join()}. */
        FUTURE,
        /** {@code submitAndWait(timeout)}. */
        CALLER,
        /** {@code submit(timeout)} again from the previous submit's completion. */
        CHAIN
    }

    @Option(names = "--json", paramLabel = "FILE",
            description = "Also write the header and results as JSON to FILE; `-` writes the JSON to standard output "
                    + "and moves the table to standard error (default: none)")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE.svg",
            description = "Also draw bandwidth and p50 latency against size to FILE.svg, one line per transport and op "
                    + "(default: none)")
    Path plot;

    @Option(names = "--timeout", paramLabel = "SECONDS", converter = Ints.TimeoutSeconds.class,
            description = "Deadline of each action, 1..86400 (default: 60)")
    int timeoutSeconds = (int) DEFAULT_TIMEOUT.toSeconds();

    /** Where the server to measure against runs. */
    record Peer(String host, int port) {
        @Override
        public String toString() {
            return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** Ops to measure, in order. */
    List<String> ops() {
        return opList.ops();
    }

    /** Sizes to measure, in the order given, without duplicates. */
    List<Long> sizes() {
        return sizeList.sizes();
    }

    /** {@code --warmup}: a number of actions, or a time when {@code time} is not null. */
    record Warmup(int actions, Duration time) {
        static Warmup ofActions(int actions) {
            return new Warmup(actions, null);
        }

        static Warmup ofTime(Duration time) {
            return new Warmup(0, time);
        }

        boolean timed() {
            return time != null;
        }

        @Override
        public String toString() {
            return timed() ? Durations.format(time) : actions + " actions";
        }
    }

    /** A list-valued option is one value to picocli (it would collect a {@code List} field's repeats). */
    record OpList(List<String> ops) {
    }

    /** See {@link OpList}. */
    record SizeList(List<Long> sizes) {
    }

    /** Whether actions run through {@code submitAndWait}, on the measuring thread. */
    boolean onCallerThread() {
        return wait == Wait.CALLER;
    }

    /** Whether actions are submitted from the completion of the one before, with no thread waiting. */
    boolean chained() {
        return wait == Wait.CHAIN;
    }

    Duration timeout() {
        return Duration.ofSeconds(timeoutSeconds);
    }

    boolean jsonToStdout() {
        return STDOUT.equals(json);
    }

    /** The largest size. */
    long maxSize() {
        return sizes().stream().mapToLong(Long::longValue).max().orElseThrow();
    }

    /** The plan for one op and size: how long or how many actions, and the warmup. */
    Measurement.Plan planFor(long sizeBytes) {
        if (iters > 0) {
            if (warmup != null && warmup.timed()) {
                throw new IllegalStateException("a warmup time with --iters is refused when the options are checked");
            }
            int w = warmup != null ? warmup.actions() : Stats.warmupIterations(sizeBytes);
            return Measurement.Plan.count(w, iters);
        }
        if (warmup == null) {
            return Measurement.Plan.timed(planWarmup(), duration, MIN_MEASURED);
        }
        return warmup.timed() ? Measurement.Plan.timed(warmup.time(), duration, MIN_MEASURED)
                : Measurement.Plan.timedAfterCount(warmup.actions(), duration, MIN_MEASURED);
    }

    /** The default warmup time in duration mode: a quarter of the duration, at most a second. */
    Duration planWarmup() {
        Duration quarter = duration.dividedBy(4);
        return quarter.compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1) : quarter;
    }

    // ------------------------------------------------------------------ converters

    static final class SizesConverter implements ITypeConverter<SizeList> {
        @Override
        public SizeList convert(String value) {
            try {
                return new SizeList(Sizes.parseList(value));
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    static final class OpsConverter implements ITypeConverter<OpList> {
        @Override
        public OpList convert(String value) {
            return new OpList(switch (value.toLowerCase(Locale.ROOT)) {
                case "read" -> List.of("read");
                case "write" -> List.of("write");
                case "both" -> List.of("write", "read");
                default -> throw new TypeConversionException("expected read, write or both, got '" + value + "'");
            });
        }
    }

    static final class WaitConverter implements ITypeConverter<Wait> {
        @Override
        public Wait convert(String value) {
            return switch (value.toLowerCase(Locale.ROOT)) {
                case "future" -> Wait.FUTURE;
                case "caller" -> Wait.CALLER;
                case "chain" -> Wait.CHAIN;
                default -> throw new TypeConversionException("expected future, caller or chain, got '" + value + "'");
            };
        }
    }

    static final class PeerConverter implements ITypeConverter<Peer> {
        private static final Pattern HOST_PORT = Pattern.compile("(?:\\[([^]]+)]|([^:\\s]+)):(\\d{1,5})");

        @Override
        public Peer convert(String value) {
            Matcher m = HOST_PORT.matcher(value.strip());
            if (!m.matches()) {
                throw new TypeConversionException("expected HOST:PORT (as `rdma-perf serve` prints it), got '" + value + "'");
            }
            int port = Integer.parseInt(m.group(3));
            if (port < 1 || port > 65_535) {
                throw new TypeConversionException("port " + port + " is out of range [1, 65535]");
            }
            return new Peer(m.group(1) != null ? m.group(1) : m.group(2), port);
        }
    }

    /** A whole number is a count of actions; anything else must be a duration ({@link DurationConverter}). */
    static final class WarmupConverter implements ITypeConverter<Warmup> {
        private static final Pattern WHOLE = Pattern.compile("[+-]?\\d+");

        @Override
        public Warmup convert(String value) {
            if (WHOLE.matcher(value.strip()).matches()) {
                return Warmup.ofActions(Ints.parse(value, 0, 10_000_000));
            }
            return Warmup.ofTime(new DurationConverter().convert(value));
        }
    }

    /** {@code 500ms}, {@code 2s}, {@code 1.5s}, {@code 1m}, or ISO-8601 ({@code PT2S}); positive, at most a day. */
    static final class DurationConverter implements ITypeConverter<Duration> {
        private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ms|s|m)");

        @Override
        public Duration convert(String value) {
            String v = value.strip().toLowerCase(Locale.ROOT);
            Duration d;
            Matcher m = SIMPLE.matcher(v);
            if (m.matches()) {
                double n = Double.parseDouble(m.group(1));
                double millis = switch (m.group(2)) {
                    case "ms" -> n;
                    case "s" -> n * 1e3;
                    default -> n * 60e3;
                };
                d = Duration.ofNanos(Math.round(millis * 1e6));
            } else {
                try {
                    d = Duration.parse(value.strip());
                } catch (RuntimeException e) {
                    throw new TypeConversionException("not a duration: '" + value + "' (expected e.g. 500ms, 2s, 1m)");
                }
            }
            if (d.isNegative() || d.isZero() || d.compareTo(Duration.ofDays(1)) > 0) {
                throw new TypeConversionException("duration out of range (0, 1 day]: '" + value + "'");
            }
            return d;
        }
    }
}
