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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Runs the real tool: this JVM is the client, a spawned JVM the server, TCP between them. */
class RdmaPerfEndToEndTest {

    @Test
    @Timeout(180)
    void rdmaPerf_twoSizesBothOps_writesFourJsonRowsWithPositiveBandwidth(@TempDir Path dir) throws Exception {
        assumeTcpWorks();
        Path json = dir.resolve("results.json");
        var out = new ByteArrayOutputStream();
        var err = new ByteArrayOutputStream();
        int code = RdmaPerf.run(new String[]{"--size", "8,4KiB", "--iters", "5", "--json", json.toString()},
                new ByteArrayInputStream(new byte[0]), new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String stdout = out.toString(StandardCharsets.UTF_8);
        String stderr = err.toString(StandardCharsets.UTF_8);
        assertEquals(0, code, () -> "stdout:\n" + stdout + "\nstderr:\n" + stderr);

        String text = Files.readString(json);
        assertTrue(text.startsWith("[") && text.strip().endsWith("]"), text);
        assertEquals(List.of("write", "write", "read", "read"), all(text, "\"op\": \"(\\w+)\""));
        assertEquals(List.of("8", "4096", "8", "4096"), all(text, "\"size_bytes\": (\\d+)"));
        assertEquals(List.of("5", "5", "5", "5"), all(text, "\"iters\": (\\d+)"));
        assertEquals(List.of("tcp", "tcp", "tcp", "tcp"), all(text, "\"transport\": \"(\\w+)\""));
        for (String bw : all(text, "\"bandwidth_mb_s\": ([0-9.]+)")) {
            assertTrue(Double.parseDouble(bw) > 0, text);
        }
        assertEquals(4, all(text, "\"lat_p99_us\": ([0-9.]+)").size(), text);

        // Header plus one row per op and size; progress went to stderr, not into the table.
        assertEquals(5, stdout.strip().lines().count(), stdout);
        assertTrue(stderr.contains("[4/4] read 4 KiB"), stderr);
    }

    private static List<String> all(String text, String regex) {
        List<String> found = new ArrayList<>();
        Matcher m = Pattern.compile(regex).matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    private static void assumeTcpWorks() {
        try (RdmaManager probe = RdmaManager.newBuilder().isolated().build()) {
            Assumptions.assumeTrue(probe.backends().contains("tcp"), "no tcp transport: " + probe.backends());
        } catch (RuntimeException e) {
            Assumptions.abort("no usable transport yet: " + e.getMessage());
        }
    }
}
