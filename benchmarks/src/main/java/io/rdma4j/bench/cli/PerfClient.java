package io.rdma4j.bench.cli;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.function.IntFunction;

/**
 * The measuring side: this process's manager against a server's buffers (a loopback server
 * process, or {@code rdma-perf serve} elsewhere with {@code --peer}). Prints the header, then one
 * row per op and size; writes the JSON and the plot at the end.
 */
final class PerfClient {

    private static final System.Logger LOG = System.getLogger(PerfClient.class.getName());

    private final RunOptions options;
    private final CommonOptions common;
    private final PrintStream out;
    private final PrintStream err;

    PerfClient(RunOptions options, CommonOptions common, PrintStream out, PrintStream err) {
        this.options = options;
        this.common = common;
        this.out = out;
        this.err = err;
    }

    /** Runs the measurement; returns the exit code (0, or 1 when it failed). */
    int run() {
        common.applyLogging();
        Transports.Configured configured;
        try {
            configured = Transports.configure(common);
        } catch (IllegalArgumentException e) {
            err.println("rdma-perf: " + e.getMessage());
            return 1;
        }
        LoopbackServer server = null;
        // This side first: a transport that cannot run here fails before a server process starts.
        try (RdmaManager manager = Transports.start(configured, common)) {
            RunOptions.Peer peer = options.peer;
            String mode;
            if (peer == null) {
                server = LoopbackServer.start(common, common.verbose ? err : null);
                peer = server.endpoint();
                mode = "loopback (a server process on " + peer + ")";
            } else {
                mode = "peer " + peer;
            }
            try (Rendezvous.Session session = Rendezvous.connect(peer, options.sizes(), common.transport, options.timeout());
                 Arena arena = Arena.ofShared()) { // transport threads touch these segments
                Transports.Choice choice = Transports.choose(manager.transports(), session.transports(), common.transport);
                RunHeader header = RunHeader.of(options, mode, session.info(), choice,
                        Transports.device(manager, choice.transport()), Transports.notRunning(manager, configured),
                        Transports.settingsInEffect(manager, configured));
                PrintStream table = options.jsonToStdout() ? err : out;
                header.lines().forEach(table::println);
                List<PerfResult> results = measure(manager, session, choice.transport(), arena, table);
                if (options.jsonToStdout()) {
                    out.print(Report.toJson(header, results));
                    out.flush();
                } else if (options.json != null) {
                    Files.writeString(options.json, Report.toJson(header, results), StandardCharsets.UTF_8);
                }
                if (options.plot != null) {
                    String title = "rdma-perf: " + choice.transport() + ", " + mode + ", rdma4j " + RunHeader.libraryVersion();
                    Files.writeString(options.plot, SvgPlot.render(title, results), StandardCharsets.UTF_8);
                }
            }
            return 0;
        } catch (Exception e) {
            err.println("rdma-perf: " + RdmaPerf.describe(e));
            if (server != null) {
                String log = server.log();
                if (!log.isEmpty()) {
                    err.println("rdma-perf: server output:");
                    err.print(log);
                }
            }
            LOG.log(System.Logger.Level.DEBUG, "run failed", e);
            return 1;
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private List<PerfResult> measure(RdmaManager manager, Rendezvous.Session session, String transport, Arena arena,
                                     PrintStream table) throws Exception {
        long max = options.maxSize();
        MemorySegment source = arena.allocate(max, 4096);
        MemorySegment sink = arena.allocate(max, 4096);
        TestPattern.fill(source);

        Progress progress = new Progress(err, Progress.stderrIsTerminal(), options.ops().size() * options.sizes().size());
        List<PerfResult> results = new ArrayList<>();
        table.println(Report.tableHeader());
        table.flush();
        for (String op : options.ops()) {
            boolean write = op.equals("write");
            for (long size : options.sizes()) {
                RdmaRemoteBuffer remote = session.token(size);
                MemorySegment local = (write ? source : sink).asSlice(0, size);
                if (!write) {
                    local.fill((byte) 0);
                }
                Measurement.Plan plan = options.planFor(size);
                progress.start(op, size, plan.describe() + ", " + options.inflight + " in flight, " + options.batch
                        + " per action");
                IntFunction<RdmaAction> actions = i -> action(manager, write, remote, local);
                Measurement.Outcome outcome = options.chained()
                        ? chained(plan, actions, op, size, progress::measured)
                        : Measurement.run(plan, options.inflight, actions, a -> await(a, op, size), progress::measured);
                verify(manager, op, remote, source, sink, size);
                PerfResult result = Stats.summarise(op, size, transport, outcome.latencies(), outcome.elapsedNanos(),
                        options.batch, options.inflight);
                results.add(result);
                progress.clear();
                table.println(Report.tableRow(result));
                table.flush();
            }
        }
        return results;
    }

    private RdmaAction action(RdmaManager manager, boolean write, RdmaRemoteBuffer remote, MemorySegment local) {
        RdmaAction action = manager.newAction();
        for (int b = 0; b < options.batch; b++) {
            if (write) {
                action.writeFrom(remote, local);
            } else {
                action.readInto(remote, local);
            }
        }
        return action;
    }

    /** After writes, reads the buffer back; after reads, checks what arrived. Unmeasured. */
    private void verify(RdmaManager manager, String op, RdmaRemoteBuffer remote, MemorySegment source,
                        MemorySegment sink, long size) throws Exception {
        MemorySegment got = sink.asSlice(0, size);
        if (op.equals("write")) {
            got.fill((byte) 0);
            await(manager.newAction().readInto(remote, got), "read-back", size);
        }
        long at = MemorySegment.mismatch(got, 0, size, source, 0, size);
        if (at >= 0) {
            throw new IllegalStateException("data check failed after " + op + " of " + Sizes.format(size)
                    + ": byte " + at + " differs from what was written");
        }
    }

    private void await(RdmaAction action, String op, long size) throws Exception {
        try {
            if (options.onCallerThread()) {
                action.submitAndWait(options.timeout());
            } else {
                action.submit(options.timeout()).join();
            }
        } catch (CompletionException e) {
            throw failed(op, size, e.getCause() != null ? e.getCause() : e);
        } catch (RdmaException e) {
            throw failed(op, size, e);
        }
    }

    private Measurement.Outcome chained(Measurement.Plan plan, IntFunction<RdmaAction> actions, String op, long size,
                                        Measurement.Listener listener) throws Exception {
        try {
            return Measurement.runChained(plan, options.inflight, actions, a -> a.submit(options.timeout()), listener);
        } catch (RdmaException e) {
            throw failed(op, size, e);
        }
    }

    private static IllegalStateException failed(String op, long size, Throwable cause) {
        return new IllegalStateException(op + " of " + Sizes.format(size) + " failed: " + RdmaPerf.describe(cause), cause);
    }
}
