package io.rdma4j.transport.shm;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** A second JVM on this host owns the buffer; this JVM holds the token and copies. */
class ShmCrossProcessTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long MIB = 1 << 20;

    private static RdmaManager holder(String... transports) {
        List<String> wanted = List.of(transports);
        return RdmaManager.newBuilder().isolated().providers(ServiceLoader.load(TransportProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> wanted.contains(p.name())).toList()).build();
    }

    @ParameterizedTest(name = "{0} bytes, {1}")
    @CsvSource({"8, allocate", "4096, allocate", "1048577, allocate", "67108864, allocate",
                "8, register", "4096, register", "1048577, register", "67108864, register"})
    void readThenWrite_acrossProcesses_movesExactBytes(long size, String memory) throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + size, "memory=" + memory, "rdma.shm.chunkMiB=1");
             RdmaManager holder = holder("shm");
             Arena arena = Arena.ofShared()) {
            assertEquals("OK", owner.command("fill 7"));
            MemorySegment local = arena.allocate(size, 8);

            holder.read(owner.token(), local, TIMEOUT).join();

            assertEquals(-1, Patterns.mismatch(local, 7));
            Patterns.fill(local, 9);
            holder.write(owner.token(), local, TIMEOUT).join();
            assertEquals("CRC " + Long.toHexString(Patterns.crc(local)), owner.command("crc"));
        }
    }

    @Test
    void readOwnBuffer_sameManager_isPlainCopy() {
        try (RdmaManager manager = holder("shm"); Arena arena = Arena.ofShared()) {
            var buffer = manager.allocate(4096).join();
            Patterns.fill(buffer.segment(), 3);
            MemorySegment local = arena.allocate(4096);

            manager.read(buffer.remote(), local, TIMEOUT).join();

            assertEquals(-1, Patterns.mismatch(local, 3));
        }
    }

    @ParameterizedTest
    @CsvSource({"allocate", "register"})
    void release_duringTransfers_inFlightOnesEnd_laterOnesAreRefused(String memory) throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + 64 * MIB, "memory=" + memory, "rdma.shm.chunkMiB=1");
             RdmaManager holder = holder("shm");
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token = owner.token();
            MemorySegment local = arena.allocate(64 * MIB, 8);
            holder.read(token, local, TIMEOUT).join();                     // attached
            CompletableFuture<Integer> reads = CompletableFuture.supplyAsync(() -> readUntilRefused(holder, token, local));

            assertEquals("OK", owner.command("release"));
            int succeeded = reads.get(60, TimeUnit.SECONDS);

            assertTrue(succeeded >= 0);
            Throwable refused = failureOf(holder.read(token, local, TIMEOUT));
            assertTrue(causeOf(refused, RemoteAccessException.class), String.valueOf(refused));
            assertTrue(refused.getMessage().contains("denied"), refused.getMessage());
        }
    }

    /** Reads until one is refused as released; any other failure fails the test. */
    private static int readUntilRefused(RdmaManager holder, RdmaRemoteBuffer token, MemorySegment local) {
        for (int n = 0; ; n++) {
            try {
                holder.read(token, local, TIMEOUT).join();
            } catch (CompletionException e) {
                if (causeOf(e, RemoteAccessException.class)) {
                    return n;
                }
                throw e;
            }
        }
    }

    @ParameterizedTest
    @CsvSource({"allocate", "register"})
    void ownerKilled_midTransfers_opFailsAsUnreachable_holderLivesOn(String memory) throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + 64 * MIB, "memory=" + memory, "rdma.shm.chunkMiB=1");
             RdmaManager holder = holder("shm");
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token = owner.token();
            MemorySegment local = arena.allocate(64 * MIB, 8);
            holder.read(token, local, TIMEOUT).join();
            CompletableFuture<Throwable> reads = CompletableFuture.supplyAsync(() -> {
                while (true) {
                    try {
                        holder.read(token, local, TIMEOUT).join();
                    } catch (CompletionException e) {
                        return e;
                    }
                }
            });

            owner.process().destroyForcibly();     // SIGKILL
            assertTrue(owner.process().waitFor(60, TimeUnit.SECONDS));
            Throwable failure = reads.get(60, TimeUnit.SECONDS);

            assertTrue(causeOf(failure, PeerUnreachableException.class), String.valueOf(failure));
            Throwable again = failureOf(holder.read(token, local, TIMEOUT));
            assertTrue(causeOf(again, PeerUnreachableException.class) || causeOf(again, RemoteAccessException.class),
                    String.valueOf(again));
        }
    }

    @ParameterizedTest
    @CsvSource({"allocate", "register"})
    void read_deadlineShorterThanTheCopy_failsAsTimeout_andTheNextReadWorks(String memory) throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + 64 * MIB, "memory=" + memory, "rdma.shm.chunkMiB=1");
             RdmaManager holder = holder("shm");
             Arena arena = Arena.ofShared()) {
            MemorySegment local = arena.allocate(64 * MIB, 8);
            holder.read(owner.token(), local, TIMEOUT).join();             // attached and mapped

            Throwable late = failureOf(holder.read(owner.token(), local, Duration.ofNanos(1)));

            assertTrue(causeOf(late, RdmaTimeoutException.class), String.valueOf(late));
            assertEquals("OK", owner.command("fill 4"));
            holder.read(owner.token(), local, TIMEOUT).join();
            assertEquals(-1, Patterns.mismatch(local, 4));
        }
    }

    /**
     * The owner closes the arena of a registered segment without releasing it (4 KiB: heap memory
     * its allocator keeps mapped and may hand out again; 1 MiB: unmapped at once): reads are
     * refused within moments, as over TCP, and so is every write afterwards.
     */
    @ParameterizedTest(name = "{0} bytes")
    @CsvSource({"4096", "1048576"})
    void ownerClosesArenaWithoutRelease_opsAreRefusedAsClosed(long size) throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.start("size=" + size, "memory=register");
             RdmaManager holder = holder("shm");
             Arena arena = Arena.ofShared()) {
            MemorySegment local = arena.allocate(size, 8);
            holder.read(owner.token(), local, TIMEOUT).join();

            assertEquals("OK", owner.command("closearena"));
            Throwable read = firstRefusedRead(holder, owner.token(), local);
            Throwable write = failureOf(holder.write(owner.token(), local, TIMEOUT));

            for (Throwable refused : List.of(read, write)) {
                assertTrue(causeOf(refused, RemoteAccessException.class), String.valueOf(refused));
                assertTrue(refused.getMessage().endsWith(CLOSED), refused.getMessage());
            }
            assertTrue(owner.command("crc").startsWith("ERR"), "the owner's arena is closed, the owner still answers");
        }
    }

    private static final String CLOSED = "the owner closed the arena of its memory without releasing it first";

    /** Reads until one is refused (the owner notices a closed arena within a few milliseconds); fails after 10 s. */
    private static Throwable firstRefusedRead(RdmaManager holder, RdmaRemoteBuffer token, MemorySegment local) {
        long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (System.nanoTime() - end < 0) {
            try {
                holder.read(token, local, TIMEOUT).join();
            } catch (CompletionException e) {
                return e.getCause();
            }
        }
        throw new AssertionError("reads still succeed 10 s after the owner closed the arena");
    }

    /**
     * An owner under Yama's ptrace_scope 1 (from a file: this host has no Yama) with default
     * settings: its registered memory goes by TCP, its allocate()d buffer by shm (mapped), and
     * the holder says why once, at INFO.
     */
    @Test
    void ownerUnderYama1_registeredMemoryGoesThroughTheStagingCopy_allocatedIsMapped_theRouteLoggedOnceAtInfo(@TempDir Path dir)
            throws Exception {
        Path scope = Files.writeString(dir.resolve("ptrace_scope"), "1");
        try (FallbackLog log = new FallbackLog();
             ShmPeerProcess registered = ShmPeerProcess.start("size=4096", "memory=register", "transports=shm,tcp",
                     "ptraceScopeFile=" + scope);
             ShmPeerProcess allocated = ShmPeerProcess.start("size=4096", "memory=allocate", "transports=shm,tcp",
                     "ptraceScopeFile=" + scope);
             RdmaManager holder = holder("shm", "tcp");
             Arena arena = Arena.ofShared()) {
            assertEquals("OK", registered.command("fill 5"));
            assertEquals("OK", allocated.command("fill 6"));
            MemorySegment local = arena.allocate(4096);

            RdmaResult first = holder.newAction().readInto(registered.token(), local).submitForResult(TIMEOUT).join();
            RdmaResult second = holder.newAction().readInto(registered.token(), local).submitForResult(TIMEOUT).join();
            assertEquals(-1, Patterns.mismatch(local, 5));
            RdmaResult mapped = holder.newAction().readInto(allocated.token(), local).submitForResult(TIMEOUT).join();

            assertEquals(-1, Patterns.mismatch(local, 6));
            assertEquals(List.of("shm"), first.transports());
            assertEquals(List.of("shm"), second.transports());
            assertEquals(List.of("shm"), mapped.transports());
            List<String> routes = log.routes();
            assertEquals(2, routes.size(), "once per owner: " + routes);
            for (String route : routes) {
                assertTrue(route.startsWith("allocate()d buffers by mapping their memory files, other registered memory "
                        + "by the owner's staging copy") && route.contains("Yama ptrace_scope=1")
                        && route.contains("rdma.shm.allowAnyPtracer is false"), route);
            }
        }
    }

    @Test
    void ownerRunningAsAnotherUser_holderFallsBackToTcp_namingTheUser() throws Exception {
        assumeTrue(isRootWithSetpriv(), "needs root and setpriv(1) to start the owner as user nobody (65534)");
        Path java = Path.of(System.getProperty("java.home"));
        assumeTrue(othersMayEnter(java), "user nobody cannot reach this JVM's java.home " + java
                + " (a directory on the way is closed to other users): nothing to start the owner with");
        Path classPath = Files.createTempDirectory("shm-other-user-");
        assumeTrue(othersMayEnter(classPath.getParent()), "user nobody cannot enter " + classPath.getParent()
                + " (java.io.tmpdir), where its readable copy of the class path would go");
        try (FallbackLog log = new FallbackLog();
             ShmPeerProcess owner = ShmPeerProcess.startAs(
                     List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"), readableCopy(classPath),
                     "size=4096", "transports=shm,tcp");
             RdmaManager holder = holder("shm", "tcp");
             Arena arena = Arena.ofShared()) {
            assertEquals("OK", owner.command("fill 9"));
            MemorySegment local = arena.allocate(4096);

            RdmaResult result = holder.newAction().readInto(owner.token(), local).submitForResult(TIMEOUT).join();

            assertEquals(List.of("tcp"), result.transports());
            assertEquals(-1, Patterns.mismatch(local, 9));
            String reason = log.onlyReason();
            assertTrue(reason.contains("different user (uid 65534, here 0)"), reason);
        } finally {
            try (Stream<Path> files = Files.walk(classPath)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    private static boolean isRootWithSetpriv() throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        return uid == 0 && Stream.of(System.getenv("PATH").split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, "setpriv")));
    }

    /**
     * This JVM's class path, readable by any user wherever the checkout and the Maven repository
     * are (under {@code /root}, in a {@code mktemp -d} directory): every entry, jar or directory of
     * classes, is copied into {@code dir}, files {@code rw-r--r--}, directories {@code rwxr-xr-x}.
     */
    private static String readableCopy(Path dir) throws IOException {
        List<String> entries = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = Path.of(entry);
            if (!Files.exists(p)) {
                continue;
            }
            Path copy = dir.resolve(n++ + "-" + p.getFileName());
            try (Stream<Path> tree = Files.walk(p)) {
                for (Path from : (Iterable<Path>) tree::iterator) {
                    Path to = copy.resolve(p.relativize(from).toString());
                    if (Files.isDirectory(from)) {
                        Files.createDirectories(to);
                        Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rwxr-xr-x"));
                    } else {
                        Files.copy(from, to);
                        Files.setPosixFilePermissions(to, PosixFilePermissions.fromString("rw-r--r--"));
                    }
                }
            }
            entries.add(copy.toString());
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        return String.join(File.pathSeparator, entries);
    }

    /** Whether a user other than the owner may enter {@code dir}: it and every directory above it are executable by others. */
    private static boolean othersMayEnter(Path dir) throws IOException {
        for (Path d = dir.toRealPath(); d != null; d = d.getParent()) {
            if (!Files.getPosixFilePermissions(d).contains(PosixFilePermission.OTHERS_EXECUTE)) {
                return false;
            }
        }
        return true;
    }

    /** The shm holder's INFO lines "falling back" (a whole owner to the next transport) and "shm: owner ...: paths" (one per owner attached). */
    private static final class FallbackLog extends Handler implements AutoCloseable {
        private final Logger jul = Logger.getLogger(ShmHolder.class.getName());
        private final List<LogRecord> records = new ArrayList<>();

        FallbackLog() {
            jul.addHandler(this);
        }

        @Override
        public synchronized void publish(LogRecord r) {
            records.add(r);
        }

        /** The reason of the one fallback line logged; fails unless exactly one was. */
        synchronized String onlyReason() {
            List<LogRecord> fallbacks = records.stream()
                    .filter(r -> r.getLevel() == Level.INFO && r.getMessage().contains("falling back")).toList();
            assertEquals(1, fallbacks.size(), records.toString());
            return String.valueOf(fallbacks.getFirst().getParameters()[2]);
        }

        /** The paths of the INFO lines "shm: owner ... (pid ...): <paths>", one per owner attached. */
        synchronized List<String> routes() {
            return records.stream().filter(r -> r.getLevel() == Level.INFO && r.getMessage().startsWith("shm: owner {0}"))
                    .map(r -> String.valueOf(r.getParameters()[2])).toList();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            jul.removeHandler(this);
        }
    }

    private static Throwable failureOf(CompletableFuture<?> f) {
        CompletionException e = assertThrows(CompletionException.class, f::join);
        return e.getCause();
    }

    private static boolean causeOf(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
