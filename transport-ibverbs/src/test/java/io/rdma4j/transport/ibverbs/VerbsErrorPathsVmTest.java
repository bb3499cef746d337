package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Error paths of the verbs transport in the soft-RoCE VM, through the public API, counted with the
 * kernel's own {@code rdma resource show}: an owner manager on rxe1 and a holder on rxe0 (one queue
 * pair between them), both of this JVM.
 *
 * <p>An op on a buffer the owner released after the holder checked its token reaches the device
 * and fails there ({@code IBV_WC_REM_ACCESS_ERR}); the queue pair goes to ERROR and what was posted
 * after it on the queue pair is flushed. The owner's replies are delayed ({@code tc netem delay}
 * on its veth, 300 ms: within the queue pair's retries) so that the later ops, their ranges checked
 * already, are surely posted, and in flight, when the error comes back.
 */
@Tag("softroce")
class VerbsErrorPathsVmTest {

    /** Long enough for every op here; an op that ends by this deadline failed the test. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final long MIB = 1L << 20;
    /** The owner's side of the veth pair: its read responses and NAKs leave there. */
    private static final String OWNER_VETH = "veth1";

    @RegisterExtension
    final Managers managers = new Managers();

    private boolean delayed;

    @AfterEach
    void ownerRepliesUndelayed() throws Exception {
        if (delayed) {
            delayed = false;
            tc("qdisc", "del", "dev", OWNER_VETH, "root");
        }
    }

    private RdmaManager manager(String device, String... settings) {
        var b = RdmaManager.newBuilder().isolated().providers(List.of(new VerbsTransportProvider()))
                .set(VerbsSettings.TARGET.key(), "nic:" + device);
        for (String s : settings) {
            int eq = s.indexOf('=');
            b.set(s.substring(0, eq), s.substring(eq + 1));
        }
        return managers.track(b.build());
    }

    /** Owner, holder, a large buffer and a released one whose token the holder checked, the owner's replies delayed. */
    private final class Setup {
        final RdmaManager owner = manager("rxe1");
        final RdmaManager holder = manager("rxe0");
        final RdmaBuffer large = owner.allocate(8 * MIB).join();
        final RdmaRemoteBuffer released;

        Setup() throws Exception {
            DataPattern.fill(large.segment(), 3);
            RdmaBuffer doomed = owner.allocate(4096).join();
            released = doomed.remote();
            holder.read(released, managers.arena().allocate(4096), TIMEOUT).join();   // token checked, queue pair up
            for (int i = 0; i < 4; i++) {       // each slice the test reads checked already: posted at once when submitted
                holder.read(large.remote().slice(i * 2 * MIB, 2 * MIB), managers.arena().allocate(2 * MIB), TIMEOUT).join();
            }
            owner.release(released).join();
            tc("qdisc", "replace", "dev", OWNER_VETH, "root", "netem", "delay", "300ms", "limit", "100000");
            delayed = true;
        }
    }

    private static Throwable cause(CompletableFuture<?> f) {
        CompletionException e = assertThrows(CompletionException.class, f::join);
        return assertInstanceOf(RdmaSubmitException.class, e.getCause()).getCause();
    }

    /**
     * The error reported is the first real one, the access error, not the flushes it caused in
     * the other four ops; the message says how many of the five failed. Mutants killed: preferring
     * the flush error ({@code VerbsSubmission.finish}: {@code flushError} before {@code firstError}),
     * and dropping the "k of n ops failed" prefix.
     */
    @Test
    void actionWhoseFirstOpHitsAReleasedBuffer_failsWithTheAccessError_notTheFlushes_sayingHowManyOfItsOpsFailed()
            throws Exception {
        Setup s = new Setup();
        RdmaAction action = s.holder.newAction().readInto(s.released, managers.arena().allocate(4096));
        for (int i = 0; i < 4; i++) {
            action.readInto(s.large.remote().slice(i * 2 * MIB, 2 * MIB), managers.arena().allocate(2 * MIB));
        }

        Throwable t = cause(action.submit(TIMEOUT));

        assertInstanceOf(RemoteAccessException.class, t, () -> String.valueOf(t));
        assertTrue(t.getMessage().matches("(?s).*\\b[1-5] of 5 ops failed: .*refused it.*"), t.getMessage());
    }

    /**
     * Local memory the holder prepared for ops (a memory region per segment) and later evicted from
     * its cache is deregistered: with {@code rdma.localMemoryCacheEntries=2}, reads into ten
     * segments leave two more memory regions on rxe0 than before, not ten. Mutant killed: an
     * evicted entry not deregistered ({@code VerbsLocal.close} doing nothing).
     */
    @Test
    void localMemoryEvictedFromTheCache_hasItsMemoryRegionDeregistered() throws Exception {
        RdmaManager owner = manager("rxe1");
        RdmaManager holder = manager("rxe0", "rdma.localMemoryCacheEntries=2");
        RdmaBuffer buffer = owner.allocate(4096).join();
        DataPattern.fill(buffer.segment(), 5);
        int before = RdmaResources.memoryRegions("rxe0");
        try (Arena locals = Arena.ofShared()) {
            for (int i = 0; i < 10; i++) {
                MemorySegment local = locals.allocate(4096, 4096);
                holder.read(buffer.remote(), local, TIMEOUT).join();
                assertEquals(-1, DataPattern.mismatch(local, 5));
            }
            int expected = before + 2;
            long end = System.nanoTime() + TIMEOUT.toNanos();
            int now = RdmaResources.memoryRegions("rxe0");
            while (now != expected && System.nanoTime() < end) {    // an evicted entry goes once its last op let go of it
                Thread.sleep(20);
                now = RdmaResources.memoryRegions("rxe0");
            }
            assertEquals(expected, now, "memory regions on rxe0 after reads into 10 segments, two kept");
        }
    }

    private static void tc(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("tc"));
        command.addAll(List.of(arguments));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), () -> String.join(" ", command) + ": " + out);
    }
}
