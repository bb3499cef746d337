package io.rdma4j.bench.cli;

import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.OutputStreamWriter;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How the measuring side gets its buffers from {@code rdma-perf serve}: one TCP connection, text
 * lines in UTF-8, kept open for the whole run; closing it tells the server to release the buffers.
 *
 * <pre>
 *   client                                   server
 *   RDMA-PERF 1                        ──▶
 *   TRANSPORT tcp        (optional)    ──▶
 *   SIZES 8,4096,...                   ──▶
 *   GO                                 ──▶   allocates max(SIZES), registers a prefix per size
 *                                      ◀──   RDMA-PERF 1
 *                                      ◀──   INFO key=value     (its version, JVM, OS, ...)
 *                                      ◀──   TOKEN size hex     (one per size)
 *                                      ◀──   READY              (or ERROR message, then close)
 *   ... transfers over the transport ...
 *   close                              ──▶   releases the buffers
 * </pre>
 */
final class Rendezvous {

    static final String HELLO = "RDMA-PERF 1";
    static final String TRANSPORT = "TRANSPORT ";
    static final String SIZES = "SIZES ";
    static final String GO = "GO";
    static final String INFO = "INFO ";
    static final String TOKEN = "TOKEN ";
    static final String READY = "READY";
    static final String ERROR = "ERROR ";
    /** Longest line either side accepts. */
    static final int MAX_LINE = 64 * 1024;

    private Rendezvous() {
    }

    /** An open session with a server: its buffers and what it said about itself. Close to release them. */
    static final class Session implements AutoCloseable {
        private final Socket socket;
        private final Map<Long, RdmaRemoteBuffer> tokens;
        private final Map<String, String> info;

        private Session(Socket socket, Map<Long, RdmaRemoteBuffer> tokens, Map<String, String> info) {
            this.socket = socket;
            this.tokens = tokens;
            this.info = info;
        }

        RdmaRemoteBuffer token(long size) {
            return tokens.get(size);
        }

        /** What the server said about itself, in order. */
        Map<String, String> info() {
            return info;
        }

        /** Transports the server's buffers offer. */
        Set<String> transports() {
            Set<String> all = new LinkedHashSet<>();
            tokens.values().forEach(t -> all.addAll(t.transports()));
            return all;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /**
     * Connects to a server and asks for buffers of {@code sizes}.
     *
     * @param transport the transport the buffers must offer, or {@code null}
     * @throws IOException when the server cannot be reached, refuses (its message), or answers nonsense
     */
    static Session connect(RunOptions.Peer peer, List<Long> sizes, String transport, Duration timeout) throws IOException {
        Socket socket = new Socket();
        try {
            try {
                socket.connect(new InetSocketAddress(peer.host(), peer.port()), (int) Math.min(timeout.toMillis(), 30_000));
            } catch (IOException e) {
                throw new IOException("cannot reach rdma-perf serve at " + peer + ": " + e.getMessage()
                        + " (is `rdma-perf serve` running there, on that port?)", e);
            }
            socket.setSoTimeout((int) Math.min(timeout.toMillis() * 4, Integer.MAX_VALUE));
            PrintWriter out = writer(socket.getOutputStream());
            out.print(HELLO + "\n");
            if (transport != null) {
                out.print(TRANSPORT + transport + "\n");
            }
            out.print(SIZES + sizes.stream().map(String::valueOf).collect(Collectors.joining(",")) + "\n");
            out.print(GO + "\n");
            out.flush();

            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String hello = readLine(in);
            if (hello != null && hello.startsWith(ERROR)) {
                throw new IOException("the server at " + peer + " refused: " + hello.substring(ERROR.length()));
            }
            if (!HELLO.equals(hello)) {
                throw new IOException(peer + " is not an rdma-perf server of this version (it said "
                        + (hello == null ? "nothing" : "'" + abbreviate(hello) + "'") + ")");
            }
            Map<Long, RdmaRemoteBuffer> tokens = new LinkedHashMap<>();
            Map<String, String> info = new LinkedHashMap<>();
            HexFormat hex = HexFormat.of();
            String line;
            while ((line = readLine(in)) != null && !line.equals(READY)) {
                if (line.startsWith(ERROR)) {
                    throw new IOException("the server at " + peer + " refused: " + line.substring(ERROR.length()));
                } else if (line.startsWith(INFO)) {
                    int eq = line.indexOf('=');
                    if (eq > INFO.length()) {
                        info.put(line.substring(INFO.length(), eq), line.substring(eq + 1));
                    }
                } else if (line.startsWith(TOKEN)) {
                    String[] parts = line.split(" ");
                    try {
                        tokens.put(Long.parseLong(parts[1]), RdmaRemoteBuffer.fromBytes(hex.parseHex(parts[2])));
                    } catch (RuntimeException e) {
                        throw new IOException("the server at " + peer + " sent a bad token line: " + e.getMessage(), e);
                    }
                }
            }
            if (line == null) {
                throw new IOException("the server at " + peer + " closed the connection before it was ready");
            }
            for (long size : sizes) {
                if (!tokens.containsKey(size)) {
                    throw new IOException("the server at " + peer + " sent no buffer of " + size + " bytes");
                }
            }
            socket.setSoTimeout(0);
            return new Session(socket, Map.copyOf(tokens), info);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    static PrintWriter writer(OutputStream out) {
        return new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), false);
    }

    /** One line, or {@code null} at the end; refuses lines longer than {@link #MAX_LINE}. */
    static String readLine(BufferedReader in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                return sb.toString();
            }
            if (sb.length() == MAX_LINE) {
                throw new IOException("line longer than " + MAX_LINE + " characters");
            }
            sb.append((char) c);
        }
        return sb.isEmpty() ? null : sb.toString();
    }

    static String abbreviate(String s) {
        return s.length() <= 60 ? s : s.substring(0, 60) + "...";
    }
}
