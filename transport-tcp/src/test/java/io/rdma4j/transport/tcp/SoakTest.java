package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two processes, each owning many buffers and each running several client threads that read
 * and write the other's buffers at random (whole buffers, prefixes through slices, batches),
 * every read checked against what was last written. Bounded: {@value #DEFAULT_SECONDS} s by
 * default; {@code -Drdma4j.soak.seconds=600} runs it longer. Neither process may grow its open
 * file descriptors, sockets or platform threads from the first tenth of the run to the last
 * (beyond {@link ProcessStats.Growth#POOL_SLACK}).
 */
class SoakTest {

    static final long DEFAULT_SECONDS = 10;
    private static final int BUFFERS = 48;
    private static final int MAX_BUFFER_BYTES = 256 * 1024;
    private static final int THREADS = 3;

    @Test
    void twoProcessesReadingAndWritingEachOthersBuffers_noCorruption_noLostOp_noGrowthOfThreadsOrFds() throws Exception {
        Assumptions.assumeTrue(ProcessStats.available(), "needs /proc/self/fd");
        long seconds = Long.getLong("rdma4j.soak.seconds", DEFAULT_SECONDS);
        long seed = Long.getLong("rdma4j.soak.seed", 20261203L);
        Duration run = Duration.ofSeconds(seconds);
        try (RdmaManager manager = TcpTesting.manager();
             PeerProcess peer = PeerProcess.start(List.of(), "size=1")) {
            Random random = new Random(seed);
            List<RdmaBuffer> mine = new ArrayList<>();
            for (int i = 0; i < BUFFERS; i++) {
                mine.add(manager.allocate(1 + random.nextInt(MAX_BUFFER_BYTES)).join());
            }
            String theirs = peer.command("alloc " + BUFFERS + " " + MAX_BUFFER_BYTES + " " + (seed + 1));
            assertTrue(theirs.startsWith("TOKENS "), theirs);
            List<RdmaRemoteBuffer> remotes = Arrays.stream(theirs.substring(7).split(","))
                    .map(h -> RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(h))).toList();
            String myTokens = String.join(",", mine.stream().map(b -> HexFormat.of().formatHex(b.remote().toBytes())).toList());

            Duration peerWait = run.plus(run.dividedBy(10)).plus(TcpTesting.SAFETY);
            CompletableFuture<String> peerRun = new CompletableFuture<>();
            Thread.ofPlatform().name("soak-peer-command").start(() -> {
                try {
                    peerRun.complete(peer.command("soak " + seconds + " " + THREADS + " " + (seed + 2) + " " + myTokens, peerWait));
                } catch (Throwable t) {
                    peerRun.completeExceptionally(t);
                }
            });
            SoakClient.Result here = new SoakClient(manager, remotes, THREADS, seed + 3).run(run);
            String there = peerRun.get(peerWait.toSeconds(), TimeUnit.SECONDS);

            System.out.println("soak " + seconds + " s, here: " + here.line());
            System.out.println("soak " + seconds + " s, peer: " + there);
            assertEquals(0, here.corruptions(), here.problems().toString());
            assertEquals(0, here.lost(), here.problems().toString());
            assertTrue(here.ops() > 0, here.line());
            assertFalse(here.growth().grew(), () -> "this process grew: " + here.growth() + "; its threads now: "
                    + threadsByName());
            assertTrue(there.startsWith("SOAK "), there);
            assertEquals("0", field(there, "corruptions"), there);
            assertEquals("0", field(there, "lost"), there);
            assertTrue(Long.parseLong(field(there, "ops")) > 0, there);
            ProcessStats.Growth peerGrowth = new ProcessStats.Growth(
                    new ProcessStats(Long.parseLong(field(there, "fdsFirst")), Long.parseLong(field(there, "socketsFirst")),
                            Integer.parseInt(field(there, "threadsFirst"))),
                    new ProcessStats(Long.parseLong(field(there, "fdsLast")), Long.parseLong(field(there, "socketsLast")),
                            Integer.parseInt(field(there, "threadsLast"))), 0);
            assertFalse(peerGrowth.grew(), "the peer process grew: " + peerGrowth);
        }
    }

    private static String field(String line, String name) {
        for (String word : line.split(" ")) {
            if (word.startsWith(name + "=")) {
                return word.substring(name.length() + 1);
            }
        }
        throw new AssertionError("no " + name + " in " + line);
    }

    /** Live platform threads by name, digits folded ("pool-#-thread-#: 3"), most first: what grew. */
    private static String threadsByName() {
        Map<String, Long> counts = Thread.getAllStackTraces().keySet().stream()
                .collect(Collectors.groupingBy(t -> t.getName().replaceAll("\\d+", "#"), TreeMap::new, Collectors.counting()));
        return counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> e.getKey() + ": " + e.getValue()).collect(Collectors.joining(", "));
    }
}
