package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every native object is freed exactly once: the kernel's own count of each device's objects
 * ({@code rdma resource show}) goes up by what a test created and back to where it was, whether
 * children are closed one by one (and again), or only through their context.
 */
@Tag("softroce")
class SoftRoceResourcesVmTest {

    @Test
    void closingChildrenThenContexts_countsReturnToTheBaseline() throws Exception {
        Map<String, Integer> before = counts("rxe0");
        Map<String, Integer> during;
        try (Arena arena = Arena.ofConfined()) {
            RcPair pair = RcPair.connect("rxe0", "rxe0", 8, true);
            MemoryRegion first = pair.a.pd.register(arena.allocate(4096), RcPair.ACCESS);
            MemoryRegion second = pair.a.pd.register(arena.allocate(4096), RcPair.ACCESS);
            during = counts("rxe0");

            second.close();
            second.close();
            pair.a.qp.close();
            pair.a.cq.close();
            pair.a.channel.close();
            pair.a.pd.close();
            first.close();
            pair.close();
            pair.close();
        }
        Map<String, Integer> after = counts("rxe0");

        assertEquals(before.get("ctx") + 2, during.get("ctx"), "contexts while open: " + during);
        assertEquals(before.get("pd") + 2, during.get("pd"), "protection domains while open: " + during);
        assertEquals(before.get("cq") + 2, during.get("cq"), "completion queues while open: " + during);
        assertEquals(before.get("qp") + 2, during.get("qp"), "queue pairs while open: " + during);
        assertEquals(before.get("mr") + 2, during.get("mr"), "memory regions while open: " + during);
        assertEquals(before, after);
    }

    @Test
    void closingOnlyTheContexts_freesEveryChildStillOpen() throws Exception {
        Map<String, Integer> before0 = counts("rxe0");
        Map<String, Integer> before1 = counts("rxe1");
        try (Arena arena = Arena.ofConfined()) {
            RcPair pair = RcPair.connect("rxe0", "rxe1", 8, true);
            MemoryRegion mr = pair.b.pd.register(arena.allocate(1 << 16), RcPair.ACCESS);
            assertTrue(counts("rxe1").get("mr") > before1.get("mr"));

            pair.close();
            mr.close();                 // already freed with its context: nothing happens
            pair.a.qp.close();
        }

        assertEquals(before0, counts("rxe0"));
        assertEquals(before1, counts("rxe1"));
    }

    /** The object counts the kernel reports for one device, e.g. {pd=1, cq=2, qp=3, cm_id=0, mr=0, ctx=1, srq=0}. */
    static Map<String, Integer> counts(String device) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rdma", "resource", "show").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "rdma resource show failed: " + out);
        for (String line : out.split("\n")) {
            if (line.matches("\\d+: " + Pattern.quote(device) + ": .*")) {
                Map<String, Integer> counts = new LinkedHashMap<>();
                Matcher m = Pattern.compile("([a-z_]+) (\\d+)").matcher(line.substring(line.indexOf(device) + device.length()));
                while (m.find()) {
                    counts.put(m.group(1), Integer.parseInt(m.group(2)));
                }
                assertTrue(counts.keySet().containsAll(java.util.List.of("ctx", "pd", "cq", "qp", "mr")), line);
                return counts;
            }
        }
        throw new AssertionError("rdma resource show lists no " + device + ":\n" + out);
    }
}
