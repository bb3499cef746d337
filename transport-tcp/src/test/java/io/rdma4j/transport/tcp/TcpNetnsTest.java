package io.rdma4j.transport.tcp;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.rdma4j.transport.tcp.TcpTesting.MIB;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Two network namespaces joined by a veth pair, 192.0.2.1/24 and 192.0.2.2/24 (TEST-NET-1): a
 * manager in each, as if on two hosts. Needs root and {@code ip netns}; skipped, saying why,
 * otherwise. The namespaces are removed afterwards.
 */
class TcpNetnsTest {

    private static final System.Logger LOG = System.getLogger(TcpNetnsTest.class.getName());
    private static final String SUFFIX = Long.toString(ProcessHandle.current().pid() % 100_000);
    private static final String NS_A = "rdma4j-a-" + SUFFIX;
    private static final String NS_B = "rdma4j-b-" + SUFFIX;
    private static final String VETH_A = "r4j" + SUFFIX + "a";
    private static final String VETH_B = "r4j" + SUFFIX + "b";

    private static final List<String> created = new ArrayList<>();
    private static boolean vethCreated;

    @BeforeAll
    static void createNamespaces() throws Exception {
        String user = System.getProperty("user.name");
        boolean root = "root".equals(user) || runQuietly("id", "-u").trim().equals("0");
        skipUnless(root, "network namespaces need root (running as " + user + ")");
        skipUnless(run("ip", "netns", "add", NS_A).ok(), "ip netns add failed: " + run("ip", "netns", "list").output());
        created.add(NS_A);
        require("ip", "netns", "add", NS_B);
        created.add(NS_B);
        require("ip", "link", "add", VETH_A, "type", "veth", "peer", "name", VETH_B);
        vethCreated = true;
        require("ip", "link", "set", VETH_A, "netns", NS_A);
        require("ip", "link", "set", VETH_B, "netns", NS_B);
        require("ip", "-n", NS_A, "addr", "add", "192.0.2.1/24", "dev", VETH_A);
        require("ip", "-n", NS_B, "addr", "add", "192.0.2.2/24", "dev", VETH_B);
        for (String[] nsDev : new String[][]{{NS_A, VETH_A}, {NS_B, VETH_B}, {NS_A, "lo"}, {NS_B, "lo"}}) {
            require("ip", "-n", nsDev[0], "link", "set", nsDev[1], "up");
        }
    }

    @AfterAll
    static void removeNamespaces() throws Exception {
        for (String ns : created) { // deleting a namespace deletes its end of the veth, and so the pair
            Result r = run("ip", "netns", "del", ns);
            if (!r.ok()) {
                LOG.log(System.Logger.Level.WARNING, "could not remove network namespace " + ns + ": " + r.output());
            }
        }
        created.clear();
        if (vethCreated) { // gone with its namespace, unless setup failed before moving it there
            run("ip", "link", "del", VETH_A);
            vethCreated = false;
        }
    }

    @Test
    void write_thenReadBack_acrossNetworkNamespaces_movesExactBytes() throws Exception {
        long size = 5 * MIB + 3;
        try (PeerProcess owner = PeerProcess.start(List.of("ip", "netns", "exec", NS_B),
                "size=" + size, "rdma.bindHost=192.0.2.2", "rdma.tcp.maxChunkMiB=1");
             PeerProcess requester = PeerProcess.start(List.of("ip", "netns", "exec", NS_A),
                     "size=1", "rdma.bindHost=192.0.2.1", "rdma.tcp.maxChunkMiB=1", "rdma.tcp.parallelism=2");
             Arena arena = Arena.ofShared()) {
            String token = java.util.HexFormat.of().formatHex(owner.token().toBytes());
            MemorySegment expected = arena.allocate(size, 8);
            Patterns.fill(expected, 77);
            String expectedCrc = "CRC " + Long.toHexString(Patterns.crc(expected));

            String written = requester.command("write " + token + " 77");
            String ownerCrc = owner.command("crc");
            String readBack = requester.command("readcrc " + token);

            assertEquals("192.0.2.2", TestTokens.dataEndpoint(owner.token()).host());
            assertEquals("OK", written, requester.logText());
            assertEquals(expectedCrc, ownerCrc);
            assertEquals(expectedCrc, readBack);
        }
    }

    // ------------------------------------------------------------------ running ip

    private record Result(int exit, String output) {
        boolean ok() {
            return exit == 0;
        }
    }

    private static void skipUnless(boolean condition, String reason) {
        if (!condition) {
            LOG.log(System.Logger.Level.WARNING, "skipping the network-namespace test: " + reason);
        }
        Assumptions.assumeTrue(condition, reason);
    }

    private static void require(String... command) throws Exception {
        Result r = run(command);
        skipUnless(r.ok(), String.join(" ", command) + " failed: " + r.output());
    }

    private static String runQuietly(String... command) {
        try {
            return run(command).output();
        } catch (Exception e) {
            return "";
        }
    }

    private static Result run(String... command) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (IOException e) {
            return new Result(-1, e.getMessage());
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, "timed out: " + out);
        }
        return new Result(p.exitValue(), out.trim());
    }
}
