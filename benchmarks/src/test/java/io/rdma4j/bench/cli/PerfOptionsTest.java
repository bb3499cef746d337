package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

class PerfOptionsTest {

    private record Outcome(int code, String out, String err) {
    }

    private static Outcome run(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int code = RdmaPerf.run(args, new ByteArrayInputStream(new byte[0]),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void parse_noArguments_givesDefaults() throws Exception {
        PerfOptions o = PerfOptions.parse();
        assertEquals(PerfOptions.Mode.CLIENT, o.mode());
        assertEquals(List.of("write", "read"), o.ops());
        assertEquals(PerfOptions.DEFAULT_SIZES, o.sizes());
        assertEquals(64L << 20, o.maxSize());
        assertEquals(0, o.iters());
        assertEquals(0, o.parallelism());
        assertEquals(0, o.chunkMiB());
        assertNull(o.json());
        assertEquals(Duration.ofSeconds(60), o.timeout());
        assertFalse(o.verbose());
        assertFalse(o.onCallerThread());
        assertEquals(10_000, o.itersFor(8));
        assertEquals(1000, o.warmupFor(8));
        assertEquals(2, o.warmupFor(64L << 20));
    }

    @Test
    void parse_everyOption_isTaken() throws Exception {
        PerfOptions o = PerfOptions.parse("--op", "READ", "--size", "8,4KiB", "--iters", "5", "--warmup", "0",
                "--parallelism", "4", "--chunk-mib", "16", "--json", "out.json", "--timeout", "3", "-v",
                "--wait", "caller");
        assertEquals(List.of("read"), o.ops());
        assertEquals(List.of(8L, 4096L), o.sizes());
        assertEquals(5, o.itersFor(8));
        assertEquals(0, o.warmupFor(8));
        assertEquals(4, o.parallelism());
        assertEquals(16, o.chunkMiB());
        assertEquals(Path.of("out.json"), o.json());
        assertEquals(Duration.ofSeconds(3), o.timeout());
        assertTrue(o.verbose());
        assertTrue(o.onCallerThread());
    }

    @Test
    void parse_equalsForm_isTaken() throws Exception {
        PerfOptions o = PerfOptions.parse("--op=write", "--size=1MiB", "--iters=7");
        assertEquals(List.of("write"), o.ops());
        assertEquals(List.of(1L << 20), o.sizes());
        assertEquals(7, o.iters());
    }

    @Test
    void parse_serve_selectsServerMode() throws Exception {
        PerfOptions o = PerfOptions.parse("serve", "--size", "8,64");
        assertEquals(PerfOptions.Mode.SERVE, o.mode());
        assertEquals(64, o.maxSize());
    }

    @Test
    void parse_unknownOption_exitsTwoNamingIt() {
        Outcome r = run("--size", "8", "--bogus");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--bogus"), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertEquals("", r.out());
    }

    @Test
    void parse_badSize_exitsTwoNamingIt() {
        Outcome r = run("--size", "8,12XB");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--size") && r.err().contains("12XB"), r.err());
    }

    @Test
    void parse_badValues_exitTwoNamingTheOption() {
        String[][] cases = {
                {"--op", "copy"}, {"--iters", "0"}, {"--iters", "ten"}, {"--parallelism", "0"},
                {"--parallelism", "65"}, {"--chunk-mib", "2048"}, {"--warmup", "-1"}, {"--timeout", "0"},
                {"--json", ""}, {"--iters"}, {"--help=yes"}, {"stray"}, {"--wait", "later"},
        };
        for (String[] args : cases) {
            Outcome r = run(args);
            assertEquals(2, r.code(), String.join(" ", args));
            assertTrue(r.err().startsWith("rdma-perf: ") && r.err().contains(args[0]), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }

    @Test
    void parse_missingJsonDirectory_exitsTwo() {
        Outcome r = run("--json", "/nonexistent-dir-for-rdma-perf/out.json");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--json"), r.err());
    }

    @Test
    void help_listsEveryOptionAndExitsZero() {
        Outcome r = run("--help");
        assertEquals(0, r.code());
        assertEquals("", r.err());
        for (String option : new String[]{"--op", "--size", "--iters", "--warmup", "--parallelism", "--chunk-mib", "--json", "--timeout",
                "--verbose", "--help"}) {
            assertTrue(r.out().contains(option), option);
        }
        assertTrue(r.out().contains("default"), r.out());
        assertEquals(PerfOptions.USAGE, r.out());
    }

    @Test
    void parse_lastValueWins() throws Exception {
        assertEquals(List.of("read"), PerfOptions.parse("--op", "write", "--op", "read").ops());
    }

    @Test
    void parse_throwsUsageException() {
        assertThrows(UsageException.class, () -> PerfOptions.parse("--size"));
    }
}
