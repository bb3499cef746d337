package io.rdma4j.bench.cli;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSettings;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * {@code rdma-perf serve}: one manager, and a rendezvous listener ({@link Rendezvous}) handing
 * each client buffers of the sizes it asks for, filled with the {@link TestPattern}, until the
 * client disconnects. Clients are served concurrently, up to {@link #MAX_CLIENTS}, each on a thread
 * of its own.
 */
final class PerfServer {

    private static final System.Logger LOG = System.getLogger(PerfServer.class.getName());
    /** Clients served at once; more are refused with a message. */
    static final int MAX_CLIENTS = 4;
    /** Printed first on stdout, followed by HOST:PORT; the loopback client reads it. */
    static final String LISTENING = "rdma-perf serve: listening on ";
    private static final Duration SETUP_TIMEOUT = Duration.ofSeconds(60);

    private final RdmaManager manager;
    private final String requestedTransport;
    private final Semaphore slots = new Semaphore(MAX_CLIENTS);
    private final PrintStream err;

    private final CommonOptions.Memory memory;

    private PerfServer(RdmaManager manager, String requestedTransport, CommonOptions.Memory memory, PrintStream err) {
        this.manager = manager;
        this.memory = memory;
        this.requestedTransport = requestedTransport;
        this.err = err;
    }

    /**
     * Serves until killed; with {@code once}, until the first client leaves; with
     * {@code exitOnStdinEof}, until {@code in} ends too (the loopback client closes it).
     *
     * @return the exit code
     */
    static int serve(CommonOptions common, int port, boolean once, boolean exitOnStdinEof, InputStream in,
                     PrintStream out, PrintStream err) {
        common.applyLogging();
        Transports.Configured configured;
        try {
            configured = Transports.configure(common);
        } catch (IllegalArgumentException e) {
            err.println("rdma-perf serve: " + e.getMessage());
            return 1;
        }
        try (RdmaManager manager = Transports.start(configured, common);
             ServerSocket listener = new ServerSocket()) {
            String bindHost = manager.setting(RdmaSettings.BIND_HOST);
            try {
                listener.bind(new InetSocketAddress(bindHost, port));
            } catch (IOException e) {
                err.println("rdma-perf serve: cannot listen on " + bindHost + ":" + port + ": " + e.getMessage()
                        + (port != 0 ? " (another port: --port N, or --port 0 for any free one)" : ""));
                return 1;
            }
            String endpoint = new RunOptions.Peer(manager.controlEndpoint().host(), listener.getLocalPort()).toString();
            out.println(LISTENING + endpoint + " (rdma4j " + RunHeader.libraryVersion() + ", transports "
                    + manager.transports() + ")");
            out.println("  on the other side: rdma-perf run --peer " + endpoint
                    + (common.transport != null ? " --transport " + common.transport : ""));
            out.flush();
            if (exitOnStdinEof) {
                Thread.ofPlatform().daemon().name("rdma-perf-stdin").start(() -> closeAtEof(in, listener));
            }
            PerfServer server = new PerfServer(manager, common.transport, common.memory, err);
            while (!listener.isClosed()) {
                Socket client;
                try {
                    client = listener.accept();
                } catch (IOException e) {
                    if (listener.isClosed()) {
                        break;
                    }
                    LOG.log(System.Logger.Level.WARNING, "rdma-perf serve: accept failed: " + e.getMessage());
                    continue;
                }
                if (once) {
                    server.session(client);
                    break;
                }
                if (!server.slots.tryAcquire()) {
                    refuse(client, "busy: " + MAX_CLIENTS + " clients are being served; try again later");
                    continue;
                }
                Thread.ofPlatform().daemon().name("rdma-perf-client-" + client.getRemoteSocketAddress()).start(() -> {
                    try {
                        server.session(client);
                    } finally {
                        server.slots.release();
                    }
                });
            }
            return 0;
        } catch (RuntimeException | IOException e) {
            err.println("rdma-perf serve: " + RdmaPerf.describe(e));
            return 1;
        }
    }

    private static void closeAtEof(InputStream in, ServerSocket listener) {
        byte[] sink = new byte[256];
        try {
            while (in.read(sink) >= 0) {
                // nothing to do
            }
        } catch (IOException e) {
            // treated as the end
        }
        try {
            listener.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private static void refuse(Socket client, String message) {
        try (client) {
            PrintWriter w = Rendezvous.writer(client.getOutputStream());
            w.print(Rendezvous.ERROR + message + "\n");
            w.flush();
        } catch (IOException e) {
            // the client is gone
        }
    }

    /** Serves one client until it disconnects; never throws. */
    private void session(Socket client) {
        List<Long> sizes = null;
        String transport = null;
        RdmaBuffer buffer = null;
        java.lang.foreign.Arena arena = null;         // --memory register: the server's own memory
        RdmaRemoteBuffer registered = null;
        try {
            client.setSoTimeout((int) SETUP_TIMEOUT.toMillis());
            BufferedReader in = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
            PrintWriter out = Rendezvous.writer(client.getOutputStream());
            if (!Rendezvous.HELLO.equals(Rendezvous.readLine(in))) {
                refuse(client, "expected '" + Rendezvous.HELLO + "': not an rdma-perf client of this version");
                return;
            }
            String line;
            while ((line = Rendezvous.readLine(in)) != null && !line.equals(Rendezvous.GO)) {
                if (line.startsWith(Rendezvous.TRANSPORT)) {
                    transport = line.substring(Rendezvous.TRANSPORT.length()).strip();
                } else if (line.startsWith(Rendezvous.SIZES)) {
                    sizes = parseSizes(line.substring(Rendezvous.SIZES.length()));
                }
            }
            if (line == null || sizes == null) {
                refuse(client, "the request ended before " + (sizes == null ? "SIZES" : Rendezvous.GO));
                return;
            }
            if (transport != null && !manager.transports().contains(transport)) {
                refuse(client, "this server does not run transport " + transport + " (it runs " + manager.transports()
                        + (requestedTransport != null ? ", as its --transport " + requestedTransport + " asks" : "") + ")");
                return;
            }
            long max = sizes.stream().mapToLong(Long::longValue).max().orElseThrow();
            RdmaRemoteBuffer whole;
            if (memory == CommonOptions.Memory.REGISTER) {
                arena = java.lang.foreign.Arena.ofShared();
                java.lang.foreign.MemorySegment segment = arena.allocate(max, 4096);
                TestPattern.fill(segment);
                registered = manager.register(segment).get(SETUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                whole = registered;
            } else {
                buffer = manager.allocate(max).get(SETUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                TestPattern.fill(buffer.segment());
                whole = buffer.remote();
            }
            out.print(Rendezvous.HELLO + "\n");
            for (Map.Entry<String, String> e : RunHeader.environment().entrySet()) {
                out.print(Rendezvous.INFO + e.getKey() + "=" + e.getValue() + "\n");
            }
            out.print(Rendezvous.INFO + "transports=" + String.join(",", manager.transports()) + "\n");
            HexFormat hex = HexFormat.of();
            for (long size : sizes) {
                // A slice of the one buffer's token, not a registration of part of it: shm hands over
                // only whole memory files (part of one would give the holder the rest), so a
                // registered part would go by cross-memory attach or, under Yama 1, by TCP.
                RdmaRemoteBuffer token = size == whole.size() ? whole : whole.slice(0, size);
                out.print(Rendezvous.TOKEN + size + " " + hex.formatHex(token.toBytes()) + "\n");
            }
            out.print(Rendezvous.READY + "\n");
            out.flush();
            client.setSoTimeout(0);
            while (in.read() >= 0) {
                // the client says nothing more; it closes when done
            }
        } catch (Exception e) {
            err.println("rdma-perf serve: client " + client.getRemoteSocketAddress() + ": " + RdmaPerf.describe(e));
            refuse(client, RdmaPerf.describe(e));
        } finally {
            if (buffer != null) {
                buffer.close();
            }
            if (registered != null) {
                try {
                    manager.release(registered).get(SETUP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (Exception e) {
                    err.println("rdma-perf serve: releasing the registered buffer failed: " + RdmaPerf.describe(e));
                }
            }
            if (arena != null) {
                arena.close();
            }
            try {
                client.close();
            } catch (IOException e) {
                // gone already
            }
        }
    }

    /** Sizes a client asks for: each in [1, {@link Sizes#MAX_BYTES}], at most 1000 of them. */
    static List<Long> parseSizes(String text) {
        String[] parts = text.strip().split(",");
        if (parts.length > 1000) {
            throw new IllegalArgumentException("too many sizes: " + parts.length);
        }
        List<Long> sizes = new ArrayList<>();
        for (String part : parts) {
            long size = Long.parseLong(part.strip());
            if (size < 1 || size > Sizes.MAX_BYTES) {
                throw new IllegalArgumentException("size out of range [1, " + Sizes.MAX_BYTES + "]: " + size);
            }
            if (!sizes.contains(size)) {
                sizes.add(size);
            }
        }
        return sizes;
    }
}
