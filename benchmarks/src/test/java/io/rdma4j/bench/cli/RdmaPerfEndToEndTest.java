package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaManager;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs the real tool in loopback mode: this JVM is the client, a spawned JVM the server, TCP between them. */
@Timeout(180)
class RdmaPerfEndToEndTest {

    private record Outcome(int code, String out, String err) {
        String both() {
            return "stdout:\n" + out + "\nstderr:\n" + err;
        }
    }

    /** What a run uses by default: the fastest transport here (shm on Linux, same host; else tcp). */
    private static String fastest;

    @BeforeAll
    static void assumeTcpWorks() {
        try (RdmaManager probe = RdmaManager.newBuilder().isolated().build()) {
            Assumptions.assumeTrue(probe.transports().contains("tcp"), "no tcp transport: " + probe.transports());
            fastest = probe.transports().getFirst();
        } catch (RuntimeException e) {
            Assumptions.abort("no usable transport yet: " + e.getMessage());
        }
    }

    private static Outcome run(String... args) {
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int code = RdmaPerf.run(args, new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Outcome(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void twoSizesBothOps_printHeaderAndTable_andWriteJsonAndPlot(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("results.json");
        Path plot = dir.resolve("results.svg");
        Outcome r = run("--size", "8,4KiB", "--iters", "5", "--json", json.toString(), "--plot", plot.toString());
        assertEquals(0, r.code(), r.both());

        String text = Files.readString(json);
        String results = results(text);
        assertEquals(List.of("write", "write", "read", "read"), all(results, "\"op\": \"(\\w+)\""));
        assertEquals(List.of("8", "4096", "8", "4096"), all(results, "\"size_bytes\": (\\d+)"));
        assertEquals(List.of("5", "5", "5", "5"), all(results, "\"iters\": (\\d+)"));
        assertEquals(List.of(fastest, fastest, fastest, fastest), all(results, "\"transport\": \"(\\w+)\""));
        for (String bw : all(results, "\"bandwidth_mb_s\": ([0-9.]+)")) {
            assertTrue(Double.parseDouble(bw) > 0, text);
        }
        for (String field : new String[]{"lat_avg_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_stddev_us",
                "msg_rate_per_s"}) {
            assertEquals(4, all(results, "\"" + field + "\": ([0-9.]+)").size(), field + " in " + text);
        }
        String header = text.substring(0, text.indexOf("\"results\""));
        for (String field : new String[]{"\"rdma4j\"", "\"jvm\"", "\"os\"", "\"cpus\"", "\"transport\": \"" + fastest + "\"",
                "\"transport_reason\"", "\"device\"", "\"settings\"", "\"rdma.tcp.parallelism\"", "\"mode\": \"loopback",
                "\"peer\""}) {
            assertTrue(header.contains(field), field + " in " + header);
        }

        // The header's lines, the table's header and one row per op and size; progress went to stderr.
        List<String> lines = r.out().strip().lines().toList();
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("# transport: " + fastest)), r.out());
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("# settings:") && l.contains("rdma.bindHost=")), r.out());
        List<String> table = lines.stream().filter(l -> !l.startsWith("#")).toList();
        assertEquals(5, table.size(), r.out());
        assertTrue(table.get(0).startsWith("op ") && table.get(0).contains("p99.9 us"), table.get(0));
        assertTrue(r.err().contains("[4/4] read 4 KiB"), r.err());

        String svg = Files.readString(plot);
        assertTrue(svg.startsWith("<svg") && svg.contains("data-series=\"" + fastest + " write\"")
                && svg.contains("data-series=\"" + fastest + " read\""),
                svg);
    }

    @Test
    void jsonToStdout_leavesOnlyJsonThere_andMovesTheTableToStderr() {
        Outcome r = run("--op", "read", "--size", "64", "--iters", "3", "--json", "-");
        assertEquals(0, r.code(), r.both());

        assertTrue(r.out().startsWith("{\n  \"header\": {") && r.out().endsWith("]\n}\n"), r.out());
        assertEquals(1, all(results(r.out()), "\"op\": \"(\\w+)\"").size(), r.out());
        assertTrue(r.err().contains("# transport: " + fastest), r.err());
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith("read ") && l.contains("64 B") && l.endsWith(fastest)), r.err());
    }

    @Test
    void inflightAndBatch_areUsed_andReported() {
        Outcome r = run("--op", "write", "--size", "4KiB", "--iters", "12", "--inflight", "3", "--batch", "4", "--json", "-");
        assertEquals(0, r.code(), r.both());

        String results = results(r.out());
        assertEquals(List.of("12"), all(results, "\"iters\": (\\d+)"));
        assertEquals(List.of("4"), all(results, "\"batch\": (\\d+)"));
        assertEquals(List.of("3"), all(results, "\"inflight\": (\\d+)"));
    }

    @Test
    void chainedWaiting_overEachTransport_measuresTheCount_andChecksTheData() {
        for (String transport : new String[]{"tcp", fastest}) {
            Outcome r = run("--transport", transport, "--size", "4KiB,1MiB", "--iters", "20", "--inflight", "4",
                    "--wait", "chain", "--json", "-");
            assertEquals(0, r.code(), transport + ": " + r.both());

            String results = results(r.out());
            assertEquals(List.of("20", "20", "20", "20"), all(results, "\"iters\": (\\d+)"), transport);
            assertTrue(r.out().contains("\"wait\": \"chain\""), r.out());
        }
    }

    @Test
    void registeredServerMemory_overEachTransport_movesAndChecksTheData() {
        for (String transport : new String[]{"tcp", fastest}) {
            Outcome r = run("--memory", "register", "--transport", transport, "--size", "8,1MiB", "--iters", "5",
                    "--batch", "4", "--json", "-");
            assertEquals(0, r.code(), transport + ": " + r.both());

            assertEquals(List.of("5", "5", "5", "5"), all(results(r.out()), "\"iters\": (\\d+)"), transport);
        }
    }

    @Test
    void durationMode_runsEachPointForAboutThatLong() {
        Outcome r = run("--op", "read", "--size", "8", "--duration", "300ms", "--json", "-");
        assertEquals(0, r.code(), r.both());

        double elapsed = Double.parseDouble(all(results(r.out()), "\"elapsed_s\": ([0-9.]+)").getFirst());
        long iters = Long.parseLong(all(results(r.out()), "\"iters\": (\\d+)").getFirst());
        assertTrue(elapsed >= 0.15, "measured for " + elapsed + " s"); // 300 ms less the first measured op's delay
        assertTrue(iters >= RunOptions.MIN_MEASURED, "measured " + iters);
    }

    @Test
    void requestedTransport_isUsed_andNamedAsTheReason() {
        Outcome r = run("--transport", "tcp", "--op", "write", "--size", "8", "--iters", "2");
        assertEquals(0, r.code(), r.both());
        assertTrue(r.out().contains("# transport: tcp, requested with --transport"), r.out());
    }

    /** The part of rdma-perf's JSON after "results". */
    private static String results(String json) {
        int at = json.indexOf("\"results\"");
        assertTrue(at > 0, json);
        return json.substring(at);
    }

    private static List<String> all(String text, String regex) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }
}
