package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** rdma-perf's command line: what each option sets, and how bad input is answered (exit 2, one clear message). */
class CommandLineTest {

    private record Outcome(int code, String out, String err) {
    }

    private static Outcome run(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int code = RdmaPerf.run(args, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static CommandLine parsed(String... args) {
        CommandLine cli = RdmaPerf.commandLine(new ByteArrayInputStream(new byte[0]), System.out, System.err);
        cli.parseArgs(args);
        return cli;
    }

    /** The options of the top-level command after parsing {@code args}. */
    private static RdmaPerf top(String... args) {
        return parsed(args).getCommand();
    }

    @Test
    void noArguments_giveTheDefaults() {
        RdmaPerf p = top();
        RunOptions o = p.run;
        assertEquals(List.of("write", "read"), o.ops());
        assertEquals(RunOptions.DEFAULT_SIZES, o.sizes());
        assertEquals(64L << 20, o.maxSize());
        assertNull(o.peer);
        assertEquals(Duration.ofSeconds(2), o.duration);
        assertEquals(0, o.iters);
        assertNull(o.warmup);
        assertEquals(1, o.inflight);
        assertEquals(1, o.batch);
        assertFalse(o.onCallerThread());
        assertNull(o.json);
        assertNull(o.plot);
        assertEquals(Duration.ofSeconds(60), o.timeout());
        assertNull(p.common.transport);
        assertEquals(0, p.common.parallelism);
        assertEquals(0, p.common.chunkMiB);
        assertFalse(p.common.verbose);
        assertEquals(Measurement.Plan.timed(Duration.ofMillis(500), Duration.ofSeconds(2), RunOptions.MIN_MEASURED),
                o.planFor(8));
    }

    @Test
    void everyOption_isTaken() {
        RdmaPerf p = top("--op", "READ", "--size", "8,4KiB", "--iters", "5", "--warmup", "0", "--parallelism", "4",
                "--chunk-mib", "16", "--json", "out.json", "--plot", "out.svg", "--timeout", "3", "-v", "--wait", "caller",
                "--inflight", "8", "--batch", "4", "--transport", "tcp", "--peer", "example.org:9000");
        RunOptions o = p.run;
        assertEquals(List.of("read"), o.ops());
        assertEquals(List.of(8L, 4096L), o.sizes());
        assertEquals(Measurement.Plan.count(0, 5), o.planFor(8));
        assertEquals(4, p.common.parallelism);
        assertEquals(16, p.common.chunkMiB);
        assertEquals(Path.of("out.json"), o.json);
        assertEquals(Path.of("out.svg"), o.plot);
        assertEquals(Duration.ofSeconds(3), o.timeout());
        assertTrue(p.common.verbose);
        assertTrue(o.onCallerThread());
        assertEquals(8, o.inflight);
        assertEquals(4, o.batch);
        assertEquals("tcp", p.common.transport);
        assertEquals(new RunOptions.Peer("example.org", 9000), o.peer);
    }

    @Test
    void withIters_andNoWarmup_theWarmupIsAFifthOfTheAdaptiveCount() {
        RunOptions o = top("--iters", "7").run;
        assertEquals(Measurement.Plan.count(1000, 7), o.planFor(8));
        assertEquals(Measurement.Plan.count(2, 7), o.planFor(64L << 20));
    }

    @Test
    void withDuration_theWarmupIsAQuarterOfIt_atMostOneSecond() {
        assertEquals(Measurement.Plan.timed(Duration.ofMillis(125), Duration.ofMillis(500), RunOptions.MIN_MEASURED),
                top("--duration", "500ms").run.planFor(8));
        assertEquals(Measurement.Plan.timed(Duration.ofSeconds(1), Duration.ofMinutes(1), RunOptions.MIN_MEASURED),
                top("--duration", "1m").run.planFor(8));
        assertEquals(Measurement.Plan.timedAfterCount(3, Duration.ofMillis(1500), RunOptions.MIN_MEASURED),
                top("--duration", "1.5s", "--warmup", "3").run.planFor(8));
        assertEquals(Duration.ofSeconds(2), top("--duration", "PT2S").run.duration);
    }

    @Test
    void warmupWithAUnit_isATime_beforeTheMeasuredTime() {
        assertEquals(Measurement.Plan.timed(Duration.ofSeconds(5), Duration.ofSeconds(4), RunOptions.MIN_MEASURED),
                top("--duration", "4s", "--warmup", "5s").run.planFor(64L << 10));
        assertEquals(Measurement.Plan.timed(Duration.ofMillis(1500), Duration.ofSeconds(2), RunOptions.MIN_MEASURED),
                top("--warmup", "1500ms").run.planFor(8));
        assertEquals("5s", top("--warmup", "5s").run.warmup.toString());
        assertEquals("3 actions", top("--warmup", "3").run.warmup.toString());
    }

    @Test
    void waitChain_isTaken() {
        RunOptions o = top("--wait", "chain").run;
        assertTrue(o.chained());
        assertFalse(o.onCallerThread());
        assertFalse(top().run.chained());
    }

    @Test
    void equalsForm_isTaken() {
        RunOptions o = top("--op=write", "--size=1MiB", "--iters=7").run;
        assertEquals(List.of("write"), o.ops());
        assertEquals(List.of(1L << 20), o.sizes());
        assertEquals(7, o.iters);
    }

    @Test
    void lastValue_wins() {
        assertEquals(List.of("read"), top("--op", "write", "--op", "read").run.ops());
    }

    @Test
    void run_takesTheSameOptionsAndAPeer() {
        CommandLine cli = parsed("run", "--peer", "[::1]:18515", "--size", "64", "--transport", "tcp");
        RdmaPerf.Run run = cli.getSubcommands().get("run").getCommand();
        assertEquals(new RunOptions.Peer("::1", 18515), run.run.peer);
        assertEquals("[::1]:18515", run.run.peer.toString());
        assertEquals(List.of(64L), run.run.sizes());
        assertEquals("tcp", run.common.transport);
    }

    @Test
    void serve_takesPortOnceAndTransport() {
        CommandLine cli = parsed("serve", "--port", "0", "--once", "--transport", "tcp", "--parallelism", "2");
        RdmaPerf.Serve serve = cli.getSubcommands().get("serve").getCommand();
        assertEquals(0, serve.port);
        assertTrue(serve.once);
        assertEquals("tcp", serve.common.transport);
        assertEquals(2, serve.common.parallelism);
        assertEquals(RdmaPerf.DEFAULT_PORT, ((RdmaPerf.Serve) parsed("serve").getSubcommands().get("serve").getCommand()).port);
    }

    @Test
    void memory_allocateByDefault_registerOnRequest_andHandedToTheLoopbackServer() {
        RdmaPerf.Serve plain = parsed("serve").getSubcommands().get("serve").getCommand();
        RdmaPerf.Serve registered = parsed("serve", "--memory", "REGISTER").getSubcommands().get("serve").getCommand();

        assertEquals(CommonOptions.Memory.ALLOCATE, plain.common.memory);
        assertEquals(CommonOptions.Memory.REGISTER, registered.common.memory);
        assertTrue(registered.common.toArgs().contains("--memory=register"), registered.common.toArgs().toString());
        assertEquals(2, run("--memory", "mapped", "--size", "8").code());
    }

    @Test
    void unknownOption_exitsTwo_namingItAndTheClosestOption() {
        Outcome r = run("--size", "8", "--sise", "16");
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("rdma-perf: ") && r.err().contains("'--sise'"), r.err());
        assertTrue(r.err().contains("--size"), "suggests --size: " + r.err());
        assertEquals("", r.out());
    }

    @Test
    void mistypedCommand_exitsTwo_suggestingTheCommand() {
        Outcome r = run("serv");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("'serv'") && r.err().contains("serve"), r.err());
    }

    @Test
    void badValues_exitTwo_namingTheOption() {
        String[][] cases = {
                {"--op", "copy"}, {"--iters", "0"}, {"--iters", "ten"}, {"--parallelism", "0"},
                {"--parallelism", "65"}, {"--chunk-mib", "2048"}, {"--warmup", "-1"}, {"--warmup", "5x"},
                {"--warmup", "0s"}, {"--timeout", "0"},
                {"--iters"}, {"--help=yes"}, {"stray"}, {"--wait", "later"}, {"--inflight", "0"}, {"--batch", "1025"},
                {"--duration", "0s"}, {"--duration", "fast"}, {"--duration", "2d"}, {"--peer", "nohost"},
                {"--peer", "host:70000"}, {"--size", "8,12XB"}, {"--size", "8,,16"},
        };
        for (String[] args : cases) {
            Outcome r = run(args);
            assertEquals(2, r.code(), String.join(" ", args));
            String option = args[0].split("=")[0];
            assertTrue(r.err().startsWith("rdma-perf: ") && r.err().contains(option), String.join(" ", args) + ": " + r.err());
            assertEquals("", r.out(), String.join(" ", args));
        }
        Outcome serve = run("serve", "--port", "65536");
        assertEquals(2, serve.code(), serve.err());
        assertTrue(serve.err().contains("--port") && serve.err().contains("rdma-perf serve --help"), serve.err());
    }

    @Test
    void missingDirectories_forJsonOrPlot_exitTwo() {
        Outcome json = run("--json", "/nonexistent-dir-for-rdma-perf/out.json");
        assertEquals(2, json.code());
        assertTrue(json.err().contains("--json") && json.err().contains("does not exist"), json.err());
        Outcome plot = run("--plot", "/nonexistent-dir-for-rdma-perf/out.svg");
        assertEquals(2, plot.code());
        assertTrue(plot.err().contains("--plot"), plot.err());
    }

    @Test
    void durationAndIters_together_exitTwo() {
        Outcome r = run("--duration", "1s", "--iters", "5");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--duration") && r.err().contains("--iters"), r.err());
    }

    @Test
    void warmupTimeAndIters_together_exitTwo() {
        Outcome r = run("--warmup", "5s", "--iters", "5");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--warmup 5s") && r.err().contains("--iters"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void optionsBeforeACommand_exitTwo() {
        Outcome r = run("--size", "8", "run");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("options go after the command"), r.err());
    }

    @Test
    void help_listsEveryOption_andExitsZero() {
        Outcome r = run("--help");
        assertEquals(0, r.code());
        assertEquals("", r.err());
        for (String option : new String[]{"--peer", "--op", "--size", "--duration", "--iters", "--warmup", "--inflight",
                "--batch", "--wait", "--json", "--plot", "--timeout", "--transport", "--parallelism", "--chunk-mib",
                "--memory", "--verbose", "--help", "--version", "serve", "run"}) {
            assertTrue(r.out().contains(option), option);
        }
        assertTrue(r.out().contains("default"), r.out());

        Outcome serve = run("serve", "--help");
        assertEquals(0, serve.code());
        for (String option : new String[]{"--port", "--once", "--transport", "18515"}) {
            assertTrue(serve.out().contains(option), option);
        }
        assertFalse(serve.out().contains("--exit-on-stdin-eof"), "hidden: " + serve.out());
    }

    @Test
    void version_namesTheLibraryVersion() {
        Outcome r = run("--version");
        assertEquals(0, r.code());
        assertTrue(r.out().startsWith("rdma-perf (rdma4j "), r.out());
        assertFalse(r.out().contains("unknown") || r.out().contains("${"), r.out());
    }

    @Test
    void aTransportNoProviderHas_failsWithExitOne_namingWhatThereIs() {
        Outcome r = run("--transport", "carrier-pigeon", "--size", "8", "--iters", "1");
        assertEquals(1, r.code());
        assertTrue(r.err().contains("carrier-pigeon") && r.err().contains("found: ") && r.err().contains("tcp"), r.err());
        assertEquals("", r.out());
    }
}
