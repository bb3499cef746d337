package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.transport.tcp.TcpTransportProvider;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An owner under Yama's {@code ptrace_scope = 1} (read from a file of the test's: this host has no
 * Yama) loosens nothing by default: holders map its {@code allocate()}d buffers and reach its
 * other registered memory through its staging copy, saying so once per owner at INFO. Two managers of this JVM.
 */
class ShmPtraceScopeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @RegisterExtension
    final Managers managers = new Managers();

    @TempDir
    Path dir;

    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger shm = Logger.getLogger("io.rdma4j.transport.shm");

    @BeforeEach
    void listen() {
        shm.addHandler(handler);
    }

    @AfterEach
    void stopListening() {
        shm.removeHandler(handler);
    }

    private RdmaManager ownerUnderScope(String scope, String... settings) throws IOException {
        Path file = Files.writeString(dir.resolve("ptrace_scope"), scope);
        var b = RdmaManager.newBuilder().isolated().providers(List.of(new ShmTransportProvider(file),
                new TcpTransportProvider()));
        for (int i = 0; i < settings.length; i += 2) {
            b.set(settings[i], settings[i + 1]);
        }
        return managers.track(b.build());
    }

    private List<String> messages(Level level, String containing) {
        return records.stream().filter(r -> r.getLevel() == level)
                .map(r -> new java.text.MessageFormat(r.getMessage()).format(r.getParameters()))
                .filter(m -> m.contains(containing)).toList();
    }

    private List<String> route(RdmaManager holder, RdmaRemoteBuffer token, long size) {
        MemorySegment local = managers.arena().allocate(size);
        RdmaResult r = holder.newAction().readInto(token, local).submitForResult(TIMEOUT).join();
        return r.transports();
    }

    @Test
    void yama1_defaults_registeredMemoryGoesByTheStagingCopy_allocatedIsMapped_andNothingIsLoosened() throws IOException {
        RdmaManager owner = ownerUnderScope("1");
        RdmaManager holder = managers.start(new ShmTransportProvider(), new TcpTransportProvider());
        RdmaRemoteBuffer registered = owner.register(Patterns.fill(managers.arena().allocate(4096, 4096), 3)).join();
        RdmaRemoteBuffer another = owner.register(managers.arena().allocate(4096, 4096)).join();
        RdmaRemoteBuffer allocated = owner.allocate(4096).join().remote();

        assertEquals(List.of("shm"), route(holder, registered, 4096));
        assertEquals(List.of("shm"), route(holder, another, 4096));
        assertEquals(List.of("shm"), route(holder, allocated, 4096));

        assertEquals(0, AnyPtracer.appliedBy(), "no prctl(PR_SET_PTRACER) is in force");
        assertEquals(List.of(), messages(Level.WARNING, ""));
        List<String> routeLines = messages(Level.INFO, "allocate()d buffers by mapping their memory files, other "
                + "registered memory by the owner's staging copy");
        assertEquals(1, routeLines.size(), "once per owner: " + routeLines);
        assertTrue(routeLines.getFirst().contains("rdma.shm.allowAnyPtracer is false"), routeLines.getFirst());
    }

    @Test
    void yama1_defaults_registeredMemoryMovesIntactThroughTheStagingCopy() throws IOException {
        RdmaManager owner = ownerUnderScope("1");
        RdmaManager holder = managers.start(new ShmTransportProvider(), new TcpTransportProvider());
        MemorySegment segment = managers.arena().allocate((5 << 20) + 3, 4096);
        RdmaRemoteBuffer token = owner.register(segment).join();
        MemorySegment local = Patterns.fill(managers.arena().allocate((5 << 20) + 3), 5);
        MemorySegment back = managers.arena().allocate((5 << 20) + 3);

        RdmaResult wrote = holder.newAction().writeFrom(token, local).submitForResult(TIMEOUT).join();
        RdmaResult read = holder.newAction().readInto(token, back).submitForResult(TIMEOUT).join();

        assertEquals(List.of("shm"), wrote.transports());
        assertEquals(List.of("shm"), read.transports());
        assertEquals(-1, Patterns.mismatch(segment, 5));
        assertEquals(-1, Patterns.mismatch(back, 5));
    }

    /** This host has no Yama, so the kernel refuses the opt-in's prctl: the owner says so and loosens nothing. */
    @Test
    void yama1_optedIn_prctlRefusedByTheKernel_isReported_andRegisteredMemoryGoesByTheStagingCopy() throws IOException {
        RdmaManager owner = ownerUnderScope("1", "rdma.shm.allowAnyPtracer", "true");
        RdmaManager holder = managers.start(new ShmTransportProvider(), new TcpTransportProvider());
        RdmaRemoteBuffer registered = owner.register(managers.arena().allocate(4096, 4096)).join();

        assertEquals(List.of("shm"), route(holder, registered, 4096));

        assertEquals(0, AnyPtracer.appliedBy());
        List<String> owners = messages(Level.INFO, "same-host peers may not attach to this process");
        assertEquals(1, owners.size(), owners.toString());
        assertTrue(owners.getFirst().contains("prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) failed under Yama "
                + "ptrace_scope=1: errno 22"), owners.getFirst());
        assertEquals(List.of(), messages(Level.WARNING, ""));
    }

    @Test
    void noYama_defaults_registeredMemoryGoesByShm() throws IOException {
        RdmaManager owner = ownerUnderScope("0");
        RdmaManager holder = managers.start(new ShmTransportProvider(), new TcpTransportProvider());
        RdmaRemoteBuffer registered = owner.register(managers.arena().allocate(4096, 4096)).join();

        assertEquals(List.of("shm"), route(holder, registered, 4096));
        assertEquals(0, AnyPtracer.appliedBy());
        List<String> routeLines = messages(Level.INFO, "other registered memory by cross-memory attach");
        assertEquals(1, routeLines.size(), "once per owner: " + routeLines);
    }
}
