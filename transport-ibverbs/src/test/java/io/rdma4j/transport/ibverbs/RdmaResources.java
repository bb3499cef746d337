package io.rdma4j.transport.ibverbs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the kernel itself counts of the verbs objects on a device, read with iproute2's {@code
 * rdma resource show}: independent of the transport's own books, so a test that counts with it
 * still sees a queue pair or a memory region the transport forgot.
 */
final class RdmaResources {

    private RdmaResources() {
    }

    /** The object counts the kernel reports for {@code device}, e.g. {pd=1, cq=2, qp=3, cm_id=0, mr=0, ctx=1, srq=0}. */
    static Map<String, Integer> counts(String device) throws IOException, InterruptedException {
        String out = rdma("resource", "show");
        for (String line : out.split("\n")) {
            if (line.matches("\\d+: " + Pattern.quote(device) + ": .*")) {
                Map<String, Integer> counts = new LinkedHashMap<>();
                Matcher m = Pattern.compile("([a-z_]+) (\\d+)").matcher(line.substring(line.indexOf(device) + device.length()));
                while (m.find()) {
                    counts.put(m.group(1), Integer.parseInt(m.group(2)));
                }
                assertTrue(counts.keySet().containsAll(List.of("ctx", "pd", "cq", "qp", "mr")), line);
                return counts;
            }
        }
        throw new AssertionError("rdma resource show lists no " + device + ":\n" + out);
    }

    /** How many memory regions the kernel holds on {@code device}. */
    static int memoryRegions(String device) throws IOException, InterruptedException {
        return counts(device).get("mr");
    }

    /**
     * The numbers of the reliable-connected queue pairs on {@code device} ({@code rdma resource show
     * qp}, its {@code lqpn}s; the device's own GSI queue pair left out).
     */
    static Set<Long> queuePairs(String device) throws IOException, InterruptedException {
        String out = rdma("resource", "show", "qp");
        Set<Long> numbers = new TreeSet<>();
        Pattern qp = Pattern.compile("link (\\S+)/\\d+ .*?lqpn (\\d+) .*?type (\\S+)");
        for (String line : out.split("\n")) {
            Matcher m = qp.matcher(line);
            if (m.find() && m.group(1).equals(device) && m.group(3).equals("RC")) {
                numbers.add(Long.parseLong(m.group(2)));
            }
        }
        return numbers;
    }

    private static String rdma(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("rdma"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + " failed: " + out);
        return out;
    }
}
