package io.rdma4j.bench.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * {@code rdma-perf}: bandwidth, message rate and latency of RDMA reads and writes between two
 * rdma4j managers, like {@code ib_write_bw}/{@code ib_read_lat} or {@code ucx_perftest} for
 * rdma4j. The command line is parsed by picocli.
 *
 * <pre>
 *   rdma-perf [options]                    loopback: starts `serve` in a second JVM here, then measures
 *   rdma-perf serve [--port N]             prints its endpoint, serves buffers to clients until killed
 *   rdma-perf run --peer HOST:PORT [...]   measures against a `serve` in another process or on another host
 * </pre>
 *
 * <p>Exit codes: 0 success, 1 the measurement (or the server) failed, 2 a bad command line. Not
 * thread-safe; one run per process.
 */
@Command(name = "rdma-perf", mixinStandardHelpOptions = true, versionProvider = RdmaPerf.Version.class,
        sortOptions = false, usageHelpAutoWidth = true, descriptionHeading = "%n",
        optionListHeading = "%nOptions:%n", commandListHeading = "%nCommands:%n",
        description = {"Measures RDMA reads and writes between two rdma4j managers: bandwidth (MB/s = 10^6 bytes/s), "
                + "message rate, and the latency of each action (average, p50, p99, p99.9, standard deviation, in us; "
                + "recorded with HdrHistogram).",
                "",
                "With no command (or `run` without --peer) it starts `rdma-perf serve` in a second JVM on this machine "
                        + "and measures against it over loopback. Settings (rdma.bindHost, RDMA_* variables, ...) apply "
                        + "to both processes as usual."},
        footer = {"", "Exit codes: 0 success, 1 the measurement failed, 2 bad command line."})
public final class RdmaPerf implements Callable<Integer> {

    /** The default port of {@code serve} (perftest's). */
    static final int DEFAULT_PORT = 18515;

    @Mixin
    RunOptions run;
    @Mixin
    CommonOptions common;
    @Spec
    CommandSpec spec;

    private final PrintStream out;
    private final PrintStream err;

    private RdmaPerf(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs rdma-perf and exits with its exit code. */
    public static void main(String[] args) {
        int code = run(args, System.in, System.out, System.err);
        System.out.flush();
        System.exit(code);
    }

    /**
     * Runs rdma-perf in this process.
     *
     * @param in  {@code serve --exit-on-stdin-eof} stops when this stream ends; unused otherwise
     * @param out the header and table, the JSON with {@code --json -}, help, the server's endpoint
     * @param err errors, progress, and the header and table with {@code --json -}
     * @return the exit code: 0 success, 1 failure, 2 bad command line
     */
    public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
        return commandLine(in, out, err).execute(args);
    }

    /** The command line with its commands, handlers and streams; {@code execute} runs it, {@code parseArgs} only parses. */
    static CommandLine commandLine(InputStream in, PrintStream out, PrintStream err) {
        CommandLine cli = new CommandLine(new RdmaPerf(out, err));
        cli.addSubcommand("serve", new Serve(in, out, err));
        cli.addSubcommand("run", new Run(out, err));
        // Settings below reach the subcommands added above.
        cli.setOverwrittenOptionsAllowed(true); // the last value wins, as in most tools
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setParameterExceptionHandler((e, a) -> {
            PrintWriter w = e.getCommandLine().getErr();
            w.println("rdma-perf: " + e.getMessage());
            CommandLine.UnmatchedArgumentException.printSuggestions(e, w);
            w.println("Try 'rdma-perf " + (e.getCommandLine() == cli ? "" : e.getCommandLine().getCommandName() + " ")
                    + "--help' for more information.");
            w.flush();
            return e.getCommandLine().getCommandSpec().exitCodeOnInvalidInput();
        });
        cli.setExecutionExceptionHandler((e, c, p) -> {
            c.getErr().println("rdma-perf: " + describe(e));
            c.getErr().flush();
            return 1;
        });
        cli.setExecutionStrategy(parsed -> {
            if (parsed.subcommand() != null && !parsed.matchedOptions().isEmpty()) {
                throw new ParameterException(cli, "options go after the command: rdma-perf "
                        + parsed.subcommand().commandSpec().name() + " [options]");
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        return cli;
    }

    @Override
    public Integer call() {
        return measure(spec, run, common, out, err);
    }

    private static int measure(CommandSpec spec, RunOptions run, CommonOptions common, PrintStream out, PrintStream err) {
        if (spec.commandLine().getParseResult().hasMatchedOption("--duration") && run.iters > 0) {
            throw new ParameterException(spec.commandLine(), "--duration and --iters exclude each other: a point runs "
                    + "for a time or for a count");
        }
        if (run.iters > 0 && run.warmup != null && run.warmup.timed()) {
            throw new ParameterException(spec.commandLine(), "--warmup " + run.warmup + " and --iters exclude each "
                    + "other: with --iters the warmup is a count of actions");
        }
        if (run.json != null && !run.jsonToStdout()) {
            requireParentDirectory(spec, "--json", run.json);
        }
        if (run.plot != null) {
            requireParentDirectory(spec, "--plot", run.plot);
        }
        return new PerfClient(run, common, out, err).run();
    }

    private static void requireParentDirectory(CommandSpec spec, String option, Path file) {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            throw new ParameterException(spec.commandLine(), option + ": directory " + parent + " does not exist");
        }
    }

    /** {@code rdma-perf run}: the same as no command; with {@code --peer}, against a server elsewhere. */
    @Command(name = "run", mixinStandardHelpOptions = true, versionProvider = RdmaPerf.Version.class, sortOptions = false, usageHelpAutoWidth = true, descriptionHeading = "%n",
        optionListHeading = "%nOptions:%n", commandListHeading = "%nCommands:%n",
            description = {"Measures against `rdma-perf serve`: the one at --peer HOST:PORT, or, without --peer, one "
                    + "started in a second JVM on this machine."},
            footer = {"", "Exit codes: 0 success, 1 the measurement failed, 2 bad command line."})
    static final class Run implements Callable<Integer> {
        @Mixin
        RunOptions run;
        @Mixin
        CommonOptions common;
        @Spec
        CommandSpec spec;

        private final PrintStream out;
        private final PrintStream err;

        Run(PrintStream out, PrintStream err) {
            this.out = out;
            this.err = err;
        }

        @Override
        public Integer call() {
            return measure(spec, run, common, out, err);
        }
    }

    /** {@code rdma-perf serve}: prints its endpoint, then serves buffers to clients. */
    @Command(name = "serve", mixinStandardHelpOptions = true, versionProvider = RdmaPerf.Version.class, sortOptions = false, usageHelpAutoWidth = true, descriptionHeading = "%n",
        optionListHeading = "%nOptions:%n", commandListHeading = "%nCommands:%n",
            description = {"Starts a manager and waits for `rdma-perf run --peer HOST:PORT` clients, handing each the "
                    + "buffers it measures against, until killed. The first line printed names HOST:PORT.",
                    "",
                    "Across hosts, bind and advertise an address the other side reaches, e.g. "
                            + "-Drdma.bindHost=0.0.0.0 -Drdma.advertisedHost=10.0.0.5 (RDMA_PERF_JAVA_OPTS for "
                            + "bin/rdma-perf)."},
            footer = {"", "Exit codes: 0 stopped, 1 failed to start, 2 bad command line."})
    static final class Serve implements Callable<Integer> {
        @Mixin
        CommonOptions common;

        @Option(names = "--port", paramLabel = "N", converter = Ints.Port.class,
                description = "Port clients connect to; 0 picks a free one (default: " + DEFAULT_PORT + ")")
        int port = DEFAULT_PORT;

        @Option(names = "--once", description = "Exit when the first client is done")
        boolean once;

        @Option(names = "--exit-on-stdin-eof", hidden = true, description = "Exit when standard input ends (loopback)")
        boolean exitOnStdinEof;

        private final InputStream in;
        private final PrintStream out;
        private final PrintStream err;

        Serve(InputStream in, PrintStream out, PrintStream err) {
            this.in = in;
            this.out = out;
            this.err = err;
        }

        @Override
        public Integer call() {
            return PerfServer.serve(common, port, once, exitOnStdinEof, in, out, err);
        }
    }

    /** {@code --version}. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[]{"rdma-perf (rdma4j " + RunHeader.libraryVersion() + ")"};
        }
    }

    /** The message of {@code t}'s first meaningful cause. */
    static String describe(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof TimeoutException) {
            return "timed out";
        }
        String message = t.getMessage();
        return message == null || message.isBlank() ? t.toString() : message;
    }
}
