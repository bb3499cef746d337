package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;

/**
 * A second process for the cross-process tests. Arguments: {@code size=<bytes>} and any number of
 * {@code <setting>=<value>}. Starts an isolated manager, allocates a buffer of that size and prints
 * {@code TOKEN <hex>}; then answers one line per command read from stdin:
 *
 * <pre>
 * crc                     -> CRC &lt;crc32 of the own buffer, hex&gt;
 * write &lt;token&gt; &lt;seed&gt;    -> OK | ERR &lt;message&gt;   (writes a pattern of the token's size into it)
 * readcrc &lt;token&gt;         -> CRC &lt;crc32&gt; | ERR &lt;message&gt;   (reads the remote buffer)
 * alloc &lt;n&gt; &lt;max&gt; &lt;seed&gt;  -> TOKENS &lt;token&gt;,...   (allocates n more buffers of 1..max bytes)
 * soak &lt;seconds&gt; &lt;threads&gt; &lt;seed&gt; &lt;token&gt;,...
 *                         -> SOAK ops=.. corruptions=.. lost=.. ...   ({@link SoakClient} on those buffers)
 * exit                    -> closes the manager and exits 0
 * </pre>
 * Logging goes to stderr; stdout carries only these lines.
 */
public final class TcpPeerMain {

    private static final HexFormat HEX = HexFormat.of();
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private TcpPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        long size = 0;
        RdmaManagerBuilder builder = RdmaManager.newBuilder().isolated();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String key = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            if (key.equals("size")) {
                size = Long.parseLong(value);
            } else {
                builder.set(key, value);
            }
        }
        try (RdmaManager manager = builder.build();
             RdmaBuffer buffer = manager.allocate(size).join();
             Arena arena = Arena.ofShared()) {
            System.out.println("TOKEN " + HEX.formatHex(buffer.remote().toBytes()));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.trim().split(" ");
                String answer;
                try {
                    answer = switch (words[0]) {
                        case "crc" -> "CRC " + Long.toHexString(Patterns.crc(buffer.segment()));
                        case "write" -> {
                            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(HEX.parseHex(words[1]));
                            MemorySegment local = arena.allocate(remote.size(), 8);
                            Patterns.fill(local, Long.parseLong(words[2]));
                            manager.write(remote, local, TIMEOUT).join();
                            yield "OK";
                        }
                        case "readcrc" -> {
                            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(HEX.parseHex(words[1]));
                            MemorySegment local = arena.allocate(remote.size(), 8);
                            manager.read(remote, local, TIMEOUT).join();
                            yield "CRC " + Long.toHexString(Patterns.crc(local));
                        }
                        case "alloc" -> {
                            java.util.Random random = new java.util.Random(Long.parseLong(words[3]));
                            java.util.List<String> tokens = new java.util.ArrayList<>();
                            for (int i = 0; i < Integer.parseInt(words[1]); i++) {
                                long bytes = 1 + random.nextInt(Integer.parseInt(words[2]));
                                tokens.add(HEX.formatHex(manager.allocate(bytes).join().remote().toBytes()));
                            }
                            yield "TOKENS " + String.join(",", tokens);
                        }
                        case "soak" -> {
                            java.util.List<RdmaRemoteBuffer> remotes = java.util.Arrays.stream(words[4].split(","))
                                    .map(h -> RdmaRemoteBuffer.fromBytes(HEX.parseHex(h))).toList();
                            yield new SoakClient(manager, remotes, Integer.parseInt(words[2]), Long.parseLong(words[3]))
                                    .run(Duration.ofSeconds(Long.parseLong(words[1]))).line();
                        }
                        case "exit" -> null;
                        default -> "ERR unknown command " + words[0];
                    };
                } catch (RuntimeException e) {
                    Throwable t = e.getCause() != null ? e.getCause() : e;
                    answer = "ERR " + String.valueOf(t.getMessage()).replace('\n', ' ');
                }
                if (answer == null) {
                    break;
                }
                System.out.println(answer);
                System.out.flush();
            }
        }
    }
}
