package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaManager;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code rdma-perf serve} and {@code rdma-perf run --peer} as two real processes, as on two hosts. */
@Timeout(180)
class ServeRunProcessTest {

    private final List<Process> started = new ArrayList<>();

    /** The transports a default manager runs here, fastest first (shm, tcp on Linux). */
    private static List<String> running;

    @BeforeAll
    static void assumeTcpWorks() {
        try (RdmaManager probe = RdmaManager.newBuilder().isolated().build()) {
            Assumptions.assumeTrue(probe.transports().contains("tcp"), "no tcp transport: " + probe.transports());
            running = probe.transports();
        } catch (RuntimeException e) {
            Assumptions.abort("no usable transport yet: " + e.getMessage());
        }
    }

    @AfterEach
    void killProcesses() throws InterruptedException {
        for (Process p : started) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Process start(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED"));
        List<String> rest = new ArrayList<>(List.of(args));
        while (!rest.isEmpty() && rest.getFirst().startsWith("-D")) { // JVM flags first
            command.add(rest.removeFirst());
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), RdmaPerf.class.getName()));
        command.addAll(rest);
        Process p = new ProcessBuilder(command).start();
        started.add(p);
        return p;
    }

    private record Finished(int code, String out, String err) {
    }

    private Finished runToEnd(String... args) throws Exception {
        Process p = start(args);
        p.getOutputStream().close();
        var err = new java.util.concurrent.CompletableFuture<String>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                err.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                err.completeExceptionally(e);
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "rdma-perf " + String.join(" ", args) + " did not finish");
        return new Finished(p.exitValue(), out, err.get(10, TimeUnit.SECONDS));
    }

    /** Starts {@code serve} and returns it with the HOST:PORT of its first line. */
    private String serve(BufferedReader[] stdout, String... extra) throws IOException {
        List<String> args = new ArrayList<>(List.of("serve", "--port", "0"));
        args.addAll(List.of(extra));
        Process server = start(args.toArray(String[]::new));
        BufferedReader reader = new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        stdout[0] = reader;
        String first = reader.readLine();
        assertTrue(first != null && first.startsWith(PerfServer.LISTENING), "serve printed: " + first);
        String second = reader.readLine();
        String endpoint = first.substring(PerfServer.LISTENING.length()).split(" ", 2)[0];
        assertTrue(second.contains("rdma-perf run --peer " + endpoint), second);
        return endpoint;
    }

    @Test
    void serve_printsItsEndpoint_andServesOneRunAfterAnother() throws Exception {
        String endpoint = serve(new BufferedReader[1]);

        Finished first = runToEnd("run", "--peer", endpoint, "--size", "8,4KiB", "--iters", "5", "--json", "-");
        assertEquals(0, first.code(), first.err());
        assertTrue(first.out().contains("\"mode\": \"peer " + endpoint + "\""), first.out());
        assertTrue(first.out().contains("\"peer\": {") && first.out().contains("\"transports\": \"" + String.join(",", running) + "\""), first.out());
        assertEquals(4, first.out().split("\"op\": ").length - 1, first.out());

        Finished second = runToEnd("run", "--peer", endpoint, "--op", "read", "--size", "64", "--iters", "2");
        assertEquals(0, second.code(), second.err());
        assertTrue(second.out().lines().anyMatch(l -> l.startsWith("read ") && l.endsWith(running.getFirst())), second.out());
        assertTrue(started.getFirst().isAlive(), "serve keeps serving");
    }

    @Test
    void serveOnce_exitsWhenItsClientIsDone() throws Exception {
        String endpoint = serve(new BufferedReader[1], "--once");

        Finished run = runToEnd("run", "--peer", endpoint, "--op", "write", "--size", "8", "--iters", "2");
        assertEquals(0, run.code(), run.err());
        assertTrue(started.getFirst().waitFor(30, TimeUnit.SECONDS), "serve --once exits");
        assertEquals(0, started.getFirst().exitValue());
    }

    @Test
    void aServerWithoutTheRequestedTransport_refusesNamingWhatItRuns() throws Exception {
        String endpoint = serve(new BufferedReader[1], "--transport", "tcp");
        RunOptions.Peer peer = new RunOptions.PeerConverter().convert(endpoint);

        try (Socket socket = new Socket(peer.host(), peer.port())) {
            PrintWriter out = Rendezvous.writer(socket.getOutputStream());
            out.print("RDMA-PERF 1\nTRANSPORT ibverbs\nSIZES 8\nGO\n");
            out.flush();
            String answer = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertEquals("ERROR this server does not run transport ibverbs (it runs [tcp], as its --transport tcp asks)",
                    answer);
        }
    }

    @Test
    void aServerAskedNonsense_refusesAndKeepsServing() throws Exception {
        String endpoint = serve(new BufferedReader[1]);
        RunOptions.Peer peer = new RunOptions.PeerConverter().convert(endpoint);

        try (Socket socket = new Socket(peer.host(), peer.port())) {
            PrintWriter out = Rendezvous.writer(socket.getOutputStream());
            out.print("RDMA-PERF 1\nSIZES 8,99999999999\nGO\n");
            out.flush();
            String answer = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8)).readLine();
            assertTrue(answer.startsWith("ERROR size out of range"), answer);
        }
        Finished run = runToEnd("run", "--peer", endpoint, "--op", "read", "--size", "8", "--iters", "2");
        assertEquals(0, run.code(), run.err());
    }

    @Test
    void runAgainstNoServer_failsWithExitOne_sayingSo() throws Exception {
        int port;
        try (var probe = new java.net.ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        Finished run = runToEnd("run", "--peer", "127.0.0.1:" + port, "--size", "8", "--iters", "1");
        assertEquals(1, run.code(), run.err());
        assertTrue(run.err().startsWith("rdma-perf: ") && run.err().contains("refused"), run.err());
    }

    @Test
    void aRequestedTransportThatCannotRunHere_failsWithExitOne_namingItAndWhy_beforeAnyServerStarts() throws Exception {
        Finished run = runToEnd("-Drdma.disableIbverbs=true", "--transport", "ibverbs", "--size", "8", "--iters", "1");
        assertEquals(1, run.code(), run.err());
        assertTrue(run.err().startsWith("rdma-perf: --transport ibverbs cannot run on this side: ")
                && run.err().contains("disabled"), run.err());
        assertTrue(!run.err().contains("server"), "no server process was started: " + run.err());

        Finished serve = runToEnd("-Drdma.disableIbverbs=true", "serve", "--port", "0", "--transport", "ibverbs");
        assertEquals(1, serve.code(), serve.err());
        assertTrue(serve.err().startsWith("rdma-perf serve: --transport ibverbs cannot run on this side: "), serve.err());
    }

    @Test
    void serveOnABusyPort_failsWithExitOne_namingThePort() throws Exception {
        try (var taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Finished serve = runToEnd("serve", "--port", Integer.toString(taken.getLocalPort()));
            assertEquals(1, serve.code(), serve.err());
            assertTrue(serve.err().contains("cannot listen on 127.0.0.1:" + taken.getLocalPort()), serve.err());
        }
    }
}
