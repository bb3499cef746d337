package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.testing.DataPattern;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The peer JVM of {@link VerbsCrossProcessVmTest}: an isolated manager over every transport on the
 * class path (ibverbs, tcp), configured by {@code <setting>=<value>} arguments. Greets with
 * {@code READY <transports>}, then answers one line per command read from stdin:
 *
 * <pre>
 * alloc &lt;bytes&gt; [seed]  -> TOKEN &lt;hex&gt;      allocates a buffer, filled with pattern seed if given (else zeros)
 * mismatch &lt;id&gt; &lt;seed&gt;   -> MISMATCH &lt;n&gt;   where buffer id first differs from pattern seed, -1 if nowhere
 * release &lt;id&gt;           -> OK
 * write &lt;hex&gt; &lt;seed&gt;     -> OK | ERR ...   writes pattern seed, the token's size, into that remote buffer
 * exit                   -> closes the manager and exits
 * </pre>
 * Failures answer {@code ERR <message>}. Logging goes to stderr.
 */
public final class VerbsPeerMain {

    private static final HexFormat HEX = HexFormat.of();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private VerbsPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        RdmaManagerBuilder builder = RdmaManager.newBuilder().isolated();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            builder.set(arg.substring(0, eq), arg.substring(eq + 1));
        }
        Map<Long, RdmaBuffer> buffers = new HashMap<>();
        try (RdmaManager manager = builder.build(); Arena arena = Arena.ofShared()) {
            System.out.println("READY " + String.join(",", manager.transports()));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null && !line.equals("exit"); ) {
                String[] words = line.trim().split(" ");
                String answer;
                try {
                    answer = switch (words[0]) {
                        case "alloc" -> {
                            RdmaBuffer b = manager.allocate(Long.parseLong(words[1])).join();
                            if (words.length > 2) {
                                DataPattern.fill(b.segment(), Long.parseLong(words[2]));
                            }
                            buffers.put(b.remote().id(), b);
                            yield "TOKEN " + HEX.formatHex(b.remote().toBytes());
                        }
                        case "mismatch" -> "MISMATCH " + DataPattern.mismatch(buffers.get(Long.parseLong(words[1])).segment(),
                                Long.parseLong(words[2]));
                        case "release" -> {
                            manager.release(buffers.remove(Long.parseLong(words[1])).remote()).join();
                            yield "OK";
                        }
                        case "write" -> {
                            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(HEX.parseHex(words[1]));
                            MemorySegment local = DataPattern.fill(arena.allocate(remote.size(), 8), Long.parseLong(words[2]));
                            manager.write(remote, local, TIMEOUT).join();
                            yield "OK";
                        }
                        default -> "ERR unknown command " + words[0];
                    };
                } catch (RuntimeException e) {
                    Throwable t = e.getCause() != null ? e.getCause() : e;
                    answer = "ERR " + String.valueOf(t.getMessage()).replace('\n', ' ');
                }
                System.out.println(answer);
                System.out.flush();
            }
        }
    }
}
