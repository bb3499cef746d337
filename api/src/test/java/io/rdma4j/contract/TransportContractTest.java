package io.rdma4j.contract;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.RegistrationException;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.StaleTokenException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.RunOnJoin;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.ForgedTokens;
import io.rdma4j.testing.KeepsOpened;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The transport contract: what every transport does, checked through two real managers (an owner
 * and a holder) that run only the transport under test. A transport's own tests extend this class
 * and name their provider; nothing else changes. Published in the {@code rdma4j-api} test-jar
 * (type {@code test-jar}, classifier {@code tests}).
 *
 * <pre>{@code
 * class TcpContractTest extends TransportContractTest {
 *     protected TransportProvider provider() { return new TcpTransportProvider(); }
 * }
 * }</pre>
 */
public abstract class TransportContractTest {

    /** How long a transfer that should succeed may take: a safety net, not a speed expectation. */
    protected static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long MIB = 1L << 20;
    private static final String DENIED = "denied: no such buffer, released, or wrong access key";

    @RegisterExtension
    final Managers managers = new Managers();

    /**
     * A new, unopened provider of the transport under test; called once per manager.
     *
     * @return the provider
     */
    protected abstract TransportProvider provider();

    /**
     * Settings for every manager of the suite, as key/value pairs (for example a small chunk size
     * so that multi-chunk paths run on small buffers). Default: none.
     *
     * @return the settings
     */
    protected Map<String, String> settings() {
        return Map.of();
    }

    /**
     * Starts a manager that runs the transport under test, and {@code others} too.
     *
     * @param others more providers, e.g. test doubles
     * @return the started manager, closed after the test
     */
    protected RdmaManager manager(TransportProvider... others) {
        List<TransportProvider> providers = new ArrayList<>(List.of(others));
        providers.add(provider());
        return managers.track(builder(providers).build());
    }

    private RdmaManagerBuilder builder(List<TransportProvider> providers) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(providers);
        settings().forEach(b::set);
        return b;
    }

    private String name() {
        return provider().name();
    }

    // ------------------------------------------------------------------ register and release

    @Test
    void register_advertisesTheTransport_andReleaseForgetsTheBuffer() {
        RdmaManager owner = manager();
        RdmaRemoteBuffer token = owner.register(segment(64)).join();

        assertEquals(List.of(name()), List.copyOf(token.transports()));
        assertEquals(1, owner.registeredBufferCount());
        owner.release(token.id()).join();
        assertEquals(0, owner.registeredBufferCount());
    }

    // ------------------------------------------------------------------ bytes

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {1, 4095, MIB + 1})
    void write_thenRead_movesExactlyTheBytes(long size) {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(size).join();
        MemorySegment source = pattern(size, 7);
        MemorySegment back = segment(size);

        holder.write(buffer.remote(), source, TIMEOUT).join();
        holder.read(buffer.remote(), back, TIMEOUT).join();

        assertEquals(-1, source.mismatch(buffer.segment()), "the owner's memory holds what was written");
        assertEquals(-1, source.mismatch(back), "the read brought back what was written");
    }

    @Test
    void write_ofASmallerLocal_fillsOnlyTheRemotePrefix() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(4096).join();
        buffer.segment().fill((byte) 1);

        holder.write(buffer.remote(), segment(1000).fill((byte) 2), TIMEOUT).join();

        assertEquals(2, buffer.segment().get(ValueLayout.JAVA_BYTE, 999));
        assertEquals(1, buffer.segment().get(ValueLayout.JAVA_BYTE, 1000));
    }

    @Test
    void read_intoALargerLocal_fillsOnlyTheLocalPrefix() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(1000).join();
        buffer.segment().fill((byte) 3);
        MemorySegment local = segment(4096).fill((byte) 9);

        holder.read(buffer.remote(), local, TIMEOUT).join();

        assertEquals(3, local.get(ValueLayout.JAVA_BYTE, 999));
        assertEquals(9, local.get(ValueLayout.JAVA_BYTE, 1000));
    }

    @Test
    void callerRegisteredMemory_isServedLikeAllocatedMemory() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        MemorySegment mine = segment(256).fill((byte) 5);
        RdmaRemoteBuffer token = owner.register(mine).join();
        MemorySegment back = segment(256);

        holder.read(token, back, TIMEOUT).join();

        assertEquals(-1, mine.mismatch(back));
    }

    // ------------------------------------------------------------------ slices

    @Test
    void slice_writeAndRead_moveExactlyTheSlicesRange() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(8192).join();
        RdmaRemoteBuffer slice = buffer.remote().slice(3000, 1000);
        MemorySegment source = pattern(1000, 11);
        MemorySegment back = segment(1000);

        holder.write(slice, source, TIMEOUT).join();
        holder.read(slice, back, TIMEOUT).join();

        assertEquals(-1, source.mismatch(back));
        assertEquals(-1, source.mismatch(buffer.segment().asSlice(3000, 1000)));
        assertEquals(0, buffer.segment().get(ValueLayout.JAVA_BYTE, 2999), "nothing before the slice changed");
        assertEquals(0, buffer.segment().get(ValueLayout.JAVA_BYTE, 4000), "nothing after the slice changed");
    }

    @Test
    void sliceOfASlice_writesAtTheComposedOffset() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(4096).join();

        holder.write(buffer.remote().slice(1024, 2048).slice(100, 10), segment(10).fill((byte) 4), TIMEOUT).join();

        assertEquals(4, buffer.segment().get(ValueLayout.JAVA_BYTE, 1124));
        assertEquals(4, buffer.segment().get(ValueLayout.JAVA_BYTE, 1133));
        assertEquals(0, buffer.segment().get(ValueLayout.JAVA_BYTE, 1134));
    }

    @Test
    void sliceBeyondTheRegistration_isRefusedByTheOwner() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(4096).join();
        RdmaRemoteBuffer claimsMore = ForgedTokens.withSize(buffer.remote(), 8192);

        Throwable failure = failureOf(holder.read(claimsMore.slice(4000, 200), segment(200), TIMEOUT));

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, failure.getCause());
        assertTrue(e.getMessage().contains("outside buffer " + buffer.id()), e.getMessage());
    }

    // ------------------------------------------------------------------ refusals

    @Test
    void releasedBuffer_unknownId_andWrongKey_areRefusedIdentically() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer released = owner.allocate(64).join();
        released.close();
        RdmaBuffer live = owner.allocate(64).join();
        RdmaRemoteBuffer t = live.remote();
        RdmaRemoteBuffer unknown = ForgedTokens.withId(t, 1_000_000);
        RdmaRemoteBuffer wrongKey = ForgedTokens.withWrongKey(t);

        List<Throwable> refusals = new ArrayList<>();
        for (RdmaRemoteBuffer token : List.of(released.remote(), unknown, wrongKey)) {
            refusals.add(failureOf(holder.read(token, segment(64), TIMEOUT)).getCause());
        }

        for (int i = 0; i < refusals.size(); i++) {
            Throwable e = refusals.get(i);
            assertEquals(RemoteAccessException.class, e.getClass(), String.valueOf(e));
            long id = i == 0 ? released.id() : i == 1 ? 1_000_000 : t.id();
            assertTrue(e.getMessage().endsWith("access to buffer " + id + " " + DENIED), e.getMessage());
        }
        assertEquals(1, owner.registeredBufferCount(), "the live buffer was not touched");
    }

    @Test
    void tokenOfAnEarlierIncarnation_isRefusedAsStale_andNeverServedFromOtherMemory() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(64).join();
        buffer.segment().fill((byte) 6);
        RdmaRemoteBuffer stale = ForgedTokens.ofAnotherIncarnation(buffer.remote());
        MemorySegment local = segment(64);

        Throwable failure = failureOf(holder.read(stale, local, TIMEOUT));

        StaleTokenException e = assertInstanceOf(StaleTokenException.class, failure.getCause());
        assertTrue(e.getMessage().contains("stale token"), e.getMessage());
        assertEquals(0, local.get(ValueLayout.JAVA_BYTE, 0), "no byte of the live buffer reached the holder");
    }

    @Test
    void remoteRelease_thenAccess_isRefusedAsDenied() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaRemoteBuffer token = owner.allocate(64).join().remote();

        holder.release(token).join();
        Throwable failure = failureOf(holder.write(token, segment(64), TIMEOUT));

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, failure.getCause());
        assertTrue(e.getMessage().endsWith(DENIED), e.getMessage());
        assertEquals(0, owner.registeredBufferCount());
    }

    // ------------------------------------------------------------------ read-only registrations

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {1, 4095, MIB + 1})
    void readOnlyBuffer_isReadLikeAnyOther(long size) {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        MemorySegment mine = pattern(size, 21);
        RdmaRemoteBuffer token = owner.register(mine.asReadOnly()).join();
        MemorySegment back = segment(size);

        holder.read(token, back, TIMEOUT).join();

        assertTrue(token.isReadOnly());
        assertEquals(-1, mine.mismatch(back));
    }

    @Test
    void aWriteToAReadOnlyBuffer_failsWithAClearError_andLeavesItsBytesAsTheyWere() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        MemorySegment mine = pattern(4096, 22);
        RdmaRemoteBuffer token = owner.register(mine.asReadOnly()).join();

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> holder.write(token, segment(64).fill((byte) 0x7f), TIMEOUT));

        assertTrue(e.getMessage().contains("read-only"), e.getMessage());
        assertEquals(-1, DataPattern.mismatch(mine, 22), "the buffer's bytes are as they were");
    }

    /**
     * The owner's side enforces a read-only registration itself: a holder whose token was edited
     * to claim write access gets the owner's refusal, per op, and no byte changes; the transport
     * keeps serving the buffer and others.
     */
    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {8, 4096, MIB + 1})
    void aTokenEditedToAllowWrites_isStillRefusedByTheOwner(long size) {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        MemorySegment mine = pattern(size, 23);
        RdmaRemoteBuffer token = owner.register(mine.asReadOnly()).join();
        RdmaRemoteBuffer forged = ForgedTokens.withWritesAllowed(token);
        RdmaBuffer writable = owner.allocate(64).join();

        Throwable failure = failureOf(holder.write(forged, segment(size).fill((byte) 0x7f), TIMEOUT));

        assertReadOnlyRefusal(failure, token.id());
        assertEquals(-1, DataPattern.mismatch(mine, 23), "the buffer's bytes are as they were");
        MemorySegment back = segment(size);
        holder.read(forged, back, TIMEOUT).join();
        assertEquals(-1, mine.mismatch(back), "reads of the buffer still work");
        holder.write(writable.remote(), segment(64).fill((byte) 4), TIMEOUT).join();
        assertEquals(4, writable.segment().get(ValueLayout.JAVA_BYTE, 63), "writes to other buffers still work");
    }

    @Test
    void manySmallWritesThroughAnEditedToken_inOneAction_areAllRefused_andNoByteChanges() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        MemorySegment mine = pattern(4096, 24);
        RdmaRemoteBuffer forged = ForgedTokens.withWritesAllowed(owner.register(mine.asReadOnly()).join());
        RdmaAction writes = holder.newAction();
        for (int i = 0; i < 16; i++) {
            writes.writeFrom(forged.slice(i * 256L, 16), segment(16).fill((byte) 0x7f));
        }

        Throwable failure = failureOf(writes.submit(TIMEOUT));

        assertReadOnlyRefusal(failure, forged.id());
        assertEquals(-1, DataPattern.mismatch(mine, 24), "the buffer's bytes are as they were");
    }

    @Test
    void aReadOnlyViewOfAllocatedMemory_isServedReadOnly_whileTheAllocationStaysWritable() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(8192).join();
        DataPattern.fill(buffer.segment(), 25);
        RdmaRemoteBuffer view = owner.register(buffer.segment().asReadOnly()).join();
        MemorySegment back = segment(8192);

        holder.read(view, back, TIMEOUT).join();
        Throwable failure = failureOf(holder.write(ForgedTokens.withWritesAllowed(view), segment(8192).fill((byte) 1), TIMEOUT));

        assertEquals(-1, DataPattern.mismatch(back, 25), "the view reads the allocation's bytes");
        assertReadOnlyRefusal(failure, view.id());
        assertEquals(-1, DataPattern.mismatch(buffer.segment(), 25), "no byte changed through the view");
        holder.write(buffer.remote(), segment(8192).fill((byte) 2), TIMEOUT).join();
        assertEquals(2, buffer.segment().get(ValueLayout.JAVA_BYTE, 8191), "the allocation's own token still writes");
    }

    @Test
    void aTokenEditedToAllowWrites_isRefused_evenWhenTheOwnersOwnManagerWrites() {
        RdmaManager owner = manager();
        MemorySegment mine = pattern(4096, 26);
        RdmaRemoteBuffer forged = ForgedTokens.withWritesAllowed(owner.register(mine.asReadOnly()).join());

        Throwable failure = failureOf(owner.write(forged, segment(64).fill((byte) 0x7f), TIMEOUT));

        assertReadOnlyRefusal(failure, forged.id());
        assertEquals(-1, DataPattern.mismatch(mine, 26), "the buffer's bytes are as they were");
    }

    /**
     * Memory the process may not write at all (a read-only file mapping: {@code PROT_READ}
     * pages): registered read-only, it is served for reads, and a write through an edited token
     * is refused like any other. A transport that cannot register such pages (verbs on a kernel
     * before Linux 6.2) must decline them ({@code Registered.notApplicable}, saying why), never
     * fail otherwise; the test is then skipped with that reason.
     */
    @Test
    void aReadOnlyFileMapping_isRegisteredAndRead_andWritesToItAreRefused() throws Exception {
        fileMappingViewedReadOnly(FileChannel.MapMode.READ_ONLY, 27);
    }

    /** A private (copy-on-write) file mapping viewed read-only: what a transport that declines {@code PROT_READ} pages serves. */
    @Test
    void aPrivateFileMappingViewedReadOnly_isRegisteredAndRead_andWritesToItAreRefused() throws Exception {
        fileMappingViewedReadOnly(FileChannel.MapMode.PRIVATE, 28);
    }

    private void fileMappingViewedReadOnly(FileChannel.MapMode mode, int seed) throws Exception {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        long size = 3 * 4096 + 100;
        Path file = Files.createTempFile("rdma4j-contract-", ".bin");
        try {
            MemorySegment content = pattern(size, seed);
            Files.write(file, content.toArray(ValueLayout.JAVA_BYTE));
            MemorySegment mapped;
            try (FileChannel ch = mode == FileChannel.MapMode.READ_ONLY ? FileChannel.open(file, StandardOpenOption.READ)
                    : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                mapped = ch.map(mode, 0, size, managers.arena()).asReadOnly();
            }
            RdmaRemoteBuffer token;
            try {
                token = owner.register(mapped).join();
            } catch (CompletionException e) {
                RegistrationException declined = assertInstanceOf(RegistrationException.class, e.getCause());
                assertTrue(declined.getMessage().contains("no transport can serve"), declined.getMessage());
                assumeTrue(false, name() + " declined the mapping: " + declined.getMessage());
                return;
            }
            MemorySegment back = segment(size);

            holder.read(token, back, TIMEOUT).join();
            Throwable failure = failureOf(holder.write(ForgedTokens.withWritesAllowed(token), segment(size).fill((byte) 1),
                    TIMEOUT));

            assertTrue(token.isReadOnly());
            assertEquals(-1, content.mismatch(back));
            assertReadOnlyRefusal(failure, token.id());
            assertEquals(-1, DataPattern.mismatch(mapped, seed), "the mapping's bytes are as they were");
            assertEquals(-1, content.mismatch(MemorySegment.ofArray(Files.readAllBytes(file))), "the file is as it was");
            owner.release(token.id()).join();
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static void assertReadOnlyRefusal(Throwable failure, long id) {
        assertInstanceOf(RdmaSubmitException.class, failure);
        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, failure.getCause(), String.valueOf(failure));
        assertTrue(e.getMessage().contains("buffer " + id + " is read-only"), e.getMessage());
    }

    // ------------------------------------------------------------------ deadlines and cancel

    @Test
    void zeroTimeout_failsWithATimeout_andTheNextOpSucceeds() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer buffer = owner.allocate(4096).join();

        Throwable failure = failureOf(holder.read(buffer.remote(), segment(4096), Duration.ZERO));

        assertInstanceOf(RdmaTimeoutException.class, failure.getCause(), String.valueOf(failure));
        holder.read(buffer.remote(), segment(4096), TIMEOUT).join();
    }

    @Test
    void cancel_completesTheFutureAsCancelled_andTheTransportKeepsServing() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        RdmaBuffer big = owner.allocate(64 * MIB).join();
        RdmaBuffer small = owner.allocate(64).join();
        small.segment().fill((byte) 8);

        CompletableFuture<Void> f = holder.read(big.remote(), segment(64 * MIB), TIMEOUT);
        boolean cancelled = f.cancel(true);
        MemorySegment back = segment(64);
        holder.read(small.remote(), back, TIMEOUT).join();

        assertEquals(cancelled, f.isCancelled());
        assertTrue(f.isDone());
        assertEquals(8, back.get(ValueLayout.JAVA_BYTE, 63));
    }

    @Test
    void cancel_midTransfer_completesOnlyAfterTheTransportStoppedWritingTheLocalSegment() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        long size = 64 * MIB;
        RdmaBuffer big = owner.allocate(size).join();
        big.segment().fill((byte) 0x11);
        MemorySegment local = segment(size);
        MemorySegment marker = segment(size).fill((byte) 0x5A);

        // A read cancelled before its first byte arrived, or one that ended before the cancel,
        // tells nothing: try until one is cancelled while it is writing.
        for (int attempt = 0; attempt < 50; attempt++) {
            local.fill((byte) 0);
            CompletableFuture<Void> f = holder.read(big.remote(), local, TIMEOUT);
            // What a caller may do once the future says the action ended: reuse its memory.
            CompletableFuture<Void> reused = f.whenComplete((ok, failure) -> local.copyFrom(marker));
            long giveUp = System.nanoTime() + TIMEOUT.toNanos();
            while (local.get(ValueLayout.JAVA_BYTE, 0) == 0 && !f.isDone() && System.nanoTime() < giveUp) {
                Thread.onSpinWait(); // until the transfer writes into the local segment
            }
            boolean cancelled = f.cancel(false);
            reused.handle((ok, failure) -> null).join();
            if (!cancelled) {
                continue;
            }
            long overwritten = local.mismatch(marker);
            assertEquals(-1, overwritten, "the transfer wrote into the local segment (first at byte " + overwritten
                    + ") after the future completed as cancelled and a dependent stage reused it");
            holder.read(big.remote().slice(0, 64), segment(64), TIMEOUT).join(); // and the transport keeps serving
            return;
        }
        fail("no read was still running when cancelled in 50 attempts");
    }

    // ------------------------------------------------------------------ concurrency and scale

    @Test
    void manyConcurrentOpsOnOneBuffer_eachMovesItsOwnRange() throws Exception {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        int parts = 64;
        int partBytes = 4096;
        RdmaBuffer buffer = owner.allocate((long) parts * partBytes).join();
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            writes.add(holder.write(buffer.remote().slice((long) i * partBytes, partBytes), pattern(partBytes, i), TIMEOUT));
        }
        CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        List<MemorySegment> backs = new ArrayList<>();
        List<CompletableFuture<Void>> reads = new ArrayList<>();
        for (int i = 0; i < parts; i++) {
            MemorySegment back = segment(partBytes);
            backs.add(back);
            reads.add(holder.read(buffer.remote().slice((long) i * partBytes, partBytes), back, TIMEOUT));
        }
        CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        for (int i = 0; i < parts; i++) {
            assertEquals(-1, pattern(partBytes, i).mismatch(backs.get(i)), "part " + i);
        }
    }

    @Test
    void manyThreadsSubmittingAtOnce_eachOpMovesItsOwnRange() throws Exception {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        int threads = 8;
        int rounds = 40;
        int partBytes = 8192;
        RdmaBuffer buffer = owner.allocate((long) threads * partBytes).join();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            CompletableFuture<Void> f = new CompletableFuture<>();
            done.add(f);
            Thread.ofPlatform().name("contract-submitter-" + t).start(() -> {
                try {
                    RdmaRemoteBuffer part = buffer.remote().slice((long) thread * partBytes, partBytes);
                    MemorySegment back = segment(partBytes);
                    start.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    for (int round = 0; round < rounds; round++) {
                        MemorySegment sent = pattern(partBytes, thread * rounds + round);
                        holder.write(part, sent, TIMEOUT).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                        holder.read(part, back, TIMEOUT).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                        assertEquals(-1, sent.mismatch(back), "thread " + thread + ", round " + round);
                    }
                    f.complete(null);
                } catch (Throwable e) {
                    f.completeExceptionally(e);
                }
            });
        }
        for (CompletableFuture<Void> f : done) {
            f.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
        }
    }

    @Test
    void manyBuffers_inOneAction_areAllMoved_andAllReleased() {
        RdmaManager owner = manager();
        RdmaManager holder = manager();
        List<RdmaBuffer> buffers = new ArrayList<>();
        RdmaAction writes = holder.newAction();
        for (int i = 0; i < 200; i++) {
            RdmaBuffer b = owner.allocate(128).join();
            buffers.add(b);
            writes.writeFrom(b.remote(), pattern(128, i));
        }

        writes.submit(TIMEOUT).join();

        for (int i = 0; i < buffers.size(); i++) {
            assertEquals(-1, pattern(128, i).mismatch(buffers.get(i).segment()), "buffer " + i);
        }
        buffers.forEach(RdmaBuffer::close);
        assertEquals(0, owner.registeredBufferCount());
    }

    // ------------------------------------------------------------------ not applicable

    @Test
    void anotherTransportNotApplicable_tokenAdvertisesOnlyThisOne_andOpsGoThroughIt() {
        StubProvider picky = new StubProvider("picky", Integer.MAX_VALUE);
        picky.notApplicableTo = segment -> "picky serves only memory it allocated";
        RdmaManager owner = manager(picky);
        RdmaManager holder = manager(new StubProvider("picky", Integer.MAX_VALUE));
        RdmaBuffer buffer = owner.allocate(64).join();
        buffer.segment().fill((byte) 12);
        MemorySegment back = segment(64);

        holder.read(buffer.remote(), back, TIMEOUT).join();

        assertEquals(List.of(name()), List.copyOf(buffer.remote().transports()));
        assertEquals(12, back.get(ValueLayout.JAVA_BYTE, 0));
        buffer.close();
        assertTrue(picky.idsOf("release").isEmpty(), "a transport that did not take the buffer is not asked to release it");
    }

    // ------------------------------------------------------------------ optional: RunOnJoin

    /**
     * {@link RunOnJoin}, where the transport's submit future implements it: called by several
     * threads at once (as several joiners do), the op completes with the right bytes; called again
     * once the future is done, it returns and touches the local memory no more.
     */
    @Test
    void runOnJoin_fromManyThreadsAtOnce_movesTheBytes_andOnceDone_touchesTheLocalMemoryNoMore() throws Exception {
        RdmaManager owner = manager();
        KeepsOpened<Transport> holderSide = new KeepsOpened<>(provider(), Transport.class);
        managers.track(builder(List.of(holderSide)).build());
        Transport transport = holderSide.opened().join();
        RdmaBuffer buffer = owner.allocate(64 * 1024).join();
        DataPattern.fill(buffer.segment(), 29);
        MemorySegment local = segment(buffer.byteSize());
        RemoteBufferRef ref = TokenRefs.refFor(buffer.remote(), name());
        LocalMemory prepared = transport.prepareLocal(local);
        try {
            CompletableFuture<Void> f = transport.submit(List.of(new TransportOp(TransportOp.OpType.READ_INTO_LOCAL, local,
                    prepared, ref, transport.decodeContext(ref), 0)), Deadline.after(TIMEOUT));
            assumeTrue(f instanceof RunOnJoin, name() + "'s submit future does not implement RunOnJoin");
            RunOnJoin work = (RunOnJoin) f;
            int joiners = 4;
            CyclicBarrier start = new CyclicBarrier(joiners);
            List<CompletableFuture<Void>> joined = new ArrayList<>();
            for (int i = 0; i < joiners; i++) {
                joined.add(CompletableFuture.runAsync(() -> {
                    try {
                        start.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    work.runOnJoin();
                }, Thread::startVirtualThread));
            }
            CompletableFuture.allOf(joined.toArray(CompletableFuture[]::new)).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            f.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertEquals(-1, DataPattern.mismatch(local, 29), "the read moved the owner's bytes");

            MemorySegment marker = segment(local.byteSize()).fill((byte) 0x5A);
            local.copyFrom(marker);             // the caller reuses its memory once the future completed
            work.runOnJoin();                   // a joiner that comes late: the future is done

            assertAll(
                    () -> assertTrue(f.isDone() && !f.isCompletedExceptionally(), "the future stays completed normally"),
                    () -> assertEquals(-1, local.mismatch(marker), "runOnJoin on a done future touched the local memory"));
        } finally {
            if (prepared != null) {
                prepared.close();
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    /** Native shared memory of {@code size} bytes, zeroed, freed after the test. */
    protected MemorySegment segment(long size) {
        return managers.arena().allocate(size, 8);
    }

    private MemorySegment pattern(long size, int seed) {
        return DataPattern.fill(segment(size), seed);
    }

    /** The exception {@code f} failed with (for an op: the {@link RdmaSubmitException}, its cause the transport's). */
    private static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return fail("expected the op to fail, got " + e);
        }
        return fail("expected the op to fail, but it succeeded");
    }
}
