package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.transport.shm.ffi.ProcessVmCopier;
import io.rdma4j.spi.TransportProvider;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.ServiceLoader;

/**
 * A holder process (shm and tcp) for tests that need one apart from the test JVM, e.g. as another
 * user. Prints {@code READY}, then answers one line per command:
 * <pre>
 * read &lt;token hex&gt;      -> ROUTE &lt;transports&gt; CRC &lt;hex&gt;   (reads the whole buffer)
 * peek &lt;pid&gt; &lt;hex addr&gt; -> PEEK &lt;errno&gt;                  (process_vm_readv of 8 bytes there; 0: it worked)
 * status &lt;pid&gt;          -> STATUS &lt;TracerPid line&gt;          (from /proc/&lt;pid&gt;/status)
 * exit
 * </pre>
 */
public final class ShmHolderMain {

    private ShmHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        try (RdmaManager manager = RdmaManager.newBuilder().isolated().providers(ServiceLoader.load(TransportProvider.class)
                .stream().map(ServiceLoader.Provider::get).filter(p -> p.name().equals("shm") || p.name().equals("tcp"))
                .toList()).build();
             Arena arena = Arena.ofShared();
             ProcessVmCopier copier = new ProcessVmCopier()) {
            System.out.println("READY");
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                String[] words = line.trim().split(" ");
                String answer;
                try {
                    answer = switch (words[0]) {
                        case "read" -> {
                            RdmaRemoteBuffer token = RdmaRemoteBuffer.fromBytes(HexFormat.of().parseHex(words[1]));
                            MemorySegment local = arena.allocate(token.size(), 4096);
                            RdmaResult r = manager.newAction().readInto(token, local).submitForResult(Duration.ofSeconds(60))
                                    .join();
                            yield "ROUTE " + String.join(",", r.transports()) + " CRC " + Long.toHexString(Patterns.crc(local));
                        }
                        case "peek" -> "PEEK " + copier.read(Long.parseLong(words[1]), arena.allocate(8), 0,
                                Long.parseUnsignedLong(words[2], 16), 8);
                        case "status" -> "STATUS " + Files.readAllLines(Path.of("/proc/" + words[1] + "/status")).stream()
                                .filter(l -> l.startsWith("TracerPid:")).findFirst().orElse("none").replace('\t', ' ');
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
        }
    }
}
