package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.TransportProvider;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The owner process of the cross-process tests. Arguments: {@code size=<bytes>},
 * {@code memory=allocate|register} ({@code RdmaManager.allocate}, backed by a memory file, or a
 * caller-owned arena segment registered with {@code register}), {@code transports=shm,tcp} and
 * {@code ptraceScopeFile=<path>} (the owner reads Yama's scope there instead of from {@code /proc}) and
 * any {@code <setting>=<value>}. Prints {@code TOKEN <hex>}, then answers one line per command:
 * <pre>
 * fill &lt;seed&gt;   -> OK           (writes pattern seed into the buffer)
 * mark &lt;text&gt;   -> OK           (writes the text's ASCII bytes at offset 0)
 * address       -> ADDRESS &lt;hex&gt; (where the buffer lies in this process)
 * secret        -> SECRET &lt;hex&gt;  (address of 4096 bytes of 0x5a this process never registers)
 * token allocate|register -> TOKEN &lt;hex&gt; (a second buffer of that kind, of the same size, pattern 5)
 * crc           -> CRC &lt;hex&gt;    (CRC32C of the buffer)
 * release       -> OK           (releases the buffer)
 * closearena    -> OK           (register only: closes the arena without releasing)
 * exit          -> closes everything and exits
 * </pre>
 */
public final class ShmPeerMain {

    private ShmPeerMain() {
    }

    public static void main(String[] args) throws Exception {
        long size = 0;
        boolean allocate = true;
        List<String> transports = List.of("shm");
        java.nio.file.Path scopeFile = PtraceScope.FILE;
        var builder = RdmaManager.newBuilder().isolated();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String key = arg.substring(0, eq);
            String value = arg.substring(eq + 1);
            switch (key) {
                case "size" -> size = Long.parseLong(value);
                case "memory" -> allocate = value.equals("allocate");
                case "transports" -> transports = List.of(value.split(","));
                case "ptraceScopeFile" -> scopeFile = java.nio.file.Path.of(value);
                default -> builder.set(key, value);
            }
        }
        List<String> wanted = transports;
        java.nio.file.Path scope = scopeFile;
        builder.providers(ServiceLoader.load(TransportProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> wanted.contains(p.name()))
                .map(p -> p.name().equals(ShmTransportProvider.NAME) ? new ShmTransportProvider(scope) : p).toList());
        Arena arena = Arena.ofShared();
        try (RdmaManager manager = builder.build()) {
            MemorySegment segment;
            RdmaRemoteBuffer token;
            if (allocate) {
                var buffer = manager.allocate(size).join();
                segment = buffer.segment();
                token = buffer.remote();
            } else {
                segment = arena.allocate(size, 4096);
                token = manager.register(segment).join();
            }
            System.out.println("TOKEN " + HexFormat.of().formatHex(token.toBytes()));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] words = line.trim().split(" ");
                String answer;
                try {
                    answer = switch (words[0]) {
                        case "fill" -> {
                            Patterns.fill(segment, Long.parseLong(words[1]));
                            yield "OK";
                        }
                        case "mark" -> {
                            byte[] text = words[1].getBytes(StandardCharsets.US_ASCII);
                            MemorySegment.copy(MemorySegment.ofArray(text), 0, segment, 0, text.length);
                            yield "OK";
                        }
                        case "address" -> "ADDRESS " + Long.toHexString(segment.address());
                        case "secret" -> "SECRET " + Long.toHexString(arena.allocate(4096, 4096).fill((byte) 0x5a).address());
                        case "token" -> {
                            RdmaRemoteBuffer extra;
                            if (words[1].equals("allocate")) {
                                var b = manager.allocate(size).join();
                                Patterns.fill(b.segment(), 5);
                                extra = b.remote();
                            } else {
                                extra = manager.register(Patterns.fill(arena.allocate(size, 4096), 5)).join();
                            }
                            yield "TOKEN " + HexFormat.of().formatHex(extra.toBytes());
                        }
                        case "crc" -> "CRC " + Long.toHexString(Patterns.crc(segment));
                        case "release" -> {
                            manager.release(token).join();
                            yield "OK";
                        }
                        case "closearena" -> {
                            arena.close();
                            yield "OK";
                        }
                        case "exit" -> null;
                        default -> "ERR unknown command " + words[0];
                    };
                } catch (RuntimeException e) {
                    answer = "ERR " + String.valueOf(e.getMessage()).replace('\n', ' ');
                }
                if (answer == null) {
                    break;
                }
                System.out.println(answer);
                System.out.flush();
            }
        } finally {
            if (arena.scope().isAlive()) {
                arena.close();
            }
        }
    }
}
