package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaSubmitException;
import io.rdma4j.RdmaTimeoutException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No late DMA: once the future of a verbs submission completed, however it completed (its own
 * deadline, a cancel, the manager's watchdog completing it from outside), the device writes none
 * of the caller's memory any more. A 64 MiB RDMA READ from an owner on rxe1 to a holder on rxe0,
 * both managers of this JVM, crosses the veth pair of the VM, whose owner's end is slowed down on
 * purpose ({@code tc netem rate}, {@value #RATE}) so that the read is still running when it is
 * stopped. A dependent stage of the future then writes a marker over the whole local buffer and
 * watches it for a while ({@link #WATCH}); the buffer must still be exactly the marker then, and
 * again once the queue pair that carried the read was destroyed and a later read between the same
 * managers completed. And no collateral failures: the other reads that shared the queue pair of
 * a cancelled one finish on a replacement queue pair.
 */
@Tag("softroce")
class VerbsNoLateDmaVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long MIB = 1L << 20;
    private static final long SIZE = 64 * MIB;
    private static final byte MARKER = 0x5a;
    /** The owner's side of the veth pair: RDMA READ responses leave there. */
    private static final String OWNER_VETH = "veth1";
    /** 64 MiB take about 2.7 s at this rate; a read still running writes 25 KB a millisecond. */
    private static final String RATE = "200mbit";
    /**
     * How long a dependent stage watches the marker it wrote: a read still running at the slowed
     * rate writes megabytes into it meanwhile. An observation window, not a synchronisation.
     */
    private static final Duration WATCH = Duration.ofSeconds(1);

    @RegisterExtension
    final Managers managers = new Managers();

    private final OpenedVerbs holderVerbs = new OpenedVerbs();
    private RdmaManager owner;
    private RdmaManager holder;
    private RdmaBuffer buffer;
    private RdmaRemoteBuffer remote;
    private boolean slowed;

    @BeforeEach
    void managersConnected_thenThePeerSlowedDown() throws Exception {
        owner = managers.track(new OpenedVerbs().builder("rxe1").build());
        holder = managers.track(holderVerbs.builder("rxe0").build());
        buffer = owner.allocate(SIZE).join();
        DataPattern.fill(buffer.segment(), 7);
        remote = buffer.remote();
        holder.read(remote.slice(0, 4096), managers.arena().allocate(4096, 64), TIMEOUT).join();   // queue pair up
        tc("qdisc", "replace", "dev", OWNER_VETH, "root", "netem", "rate", RATE, "limit", "100000");
        slowed = true;
    }

    @AfterEach
    void peerBackToFullSpeed() throws Exception {
        fullSpeed();
    }

    private void fullSpeed() throws IOException, InterruptedException {
        if (slowed) {
            slowed = false;
            tc("qdisc", "del", "dev", OWNER_VETH, "root");
        }
    }

    @Test
    void cancelledRead_writesNothingAfterItsFutureCompleted() throws Exception {
        Submitted read = submitRead(Deadline.after(TIMEOUT));
        CompletableFuture<Long> overwritten = read.future.handle((ok, t) -> {
            assertInstanceOf(CancellationException.class, t);
            return markAndWatch(read.local);
        });
        read.awaitStarted();

        assertTrue(read.future.cancel(true), "the read was still running");

        assertEquals(0, holderVerbs.transport().brokenQueuePairsNotDestroyed(),
                "the queue pair that carried the read was drained and destroyed before cancel returned");
        assertQuiet(read, overwritten.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    }

    /**
     * With no time given to the flush, a cancel destroys the queue pair that carries the read at
     * once (after {@code ibv_destroy_qp} the device touches none of its memory), instead of
     * returning before the flush arrived; the read's work requests count as flushed.
     */
    @Test
    void cancelledRead_whoseFlushIsGivenNoTime_destroysItsQueuePairBeforeCancelReturns() throws Exception {
        holderVerbs.transport().flushBound(Duration.ZERO);
        Submitted read = submitRead(Deadline.after(TIMEOUT));
        CompletableFuture<Long> overwritten = read.future.handle((ok, t) -> markAndWatch(read.local));
        read.awaitStarted();

        assertTrue(read.future.cancel(true), "the read was still running");

        assertEquals(0, holderVerbs.transport().brokenQueuePairsNotDestroyed(),
                "the queue pair that carried the read was destroyed before cancel returned");
        assertQuiet(read, overwritten.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    }

    @Test
    void readCompletedFromOutsideAsTimedOut_asTheManagersWatchdogDoes_writesNothingAfterwards() throws Exception {
        Submitted read = submitRead(Deadline.after(TIMEOUT));
        CompletableFuture<Long> overwritten = read.future.handle((ok, t) -> {
            assertInstanceOf(TransportException.class, t);
            return markAndWatch(read.local);
        });
        read.awaitStarted();

        assertTrue(read.future.completeExceptionally(new TransportException(TransportException.Kind.TIMEOUT, "watchdog")),
                "the read was still running");

        assertQuiet(read, overwritten.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    }

    @Test
    void readTimedOutByItsDeadline_writesNothingAfterItsFutureCompleted() throws Exception {
        MemorySegment local = managers.arena().allocate(SIZE, 64);
        CompletableFuture<Long> overwritten = holder.read(remote, local, Duration.ofSeconds(1)).handle((ok, t) -> {
            assertInstanceOf(RdmaTimeoutException.class, assertInstanceOf(RdmaSubmitException.class,
                    assertInstanceOf(CompletionException.class, t).getCause()).getCause(), String.valueOf(t));
            return markAndWatch(local);
        });

        assertQuiet(new Submitted(null, local, null), overwritten.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    }

    /**
     * A dependent stage of one read, run by the device's poller thread, cancels another read
     * whose work requests are in flight on the same queue pair: nobody else polls the completion
     * queue meanwhile, so the cancel must take the flush itself; it returns, and the cancelled
     * read wrote nothing after it.
     */
    @Test
    void cancelFromAStageOnThePollerThread_returnsOnceItsReadIsFlushed_andNothingIsWrittenAfterwards() throws Exception {
        Submitted first = submitRead(Deadline.after(TIMEOUT));
        Submitted second = submitRead(Deadline.after(TIMEOUT));
        CompletableFuture<Long> overwritten = second.future.handle((ok, t) -> {
            assertInstanceOf(CancellationException.class, t);
            return markAndWatch(second.local);
        });
        CompletableFuture<String> cancelledOn = first.future.thenApply(ok -> {
            second.future.cancel(true);
            return Thread.currentThread().getName();
        });
        assertFalse(first.future.isDone(), "the stage was in place before the first read completed");

        String thread = cancelledOn.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);

        assertTrue(thread.startsWith("rdma4j-verbs-poller-"), "the poller delivered the first read: " + thread);
        assertTrue(second.future.isCancelled());
        assertQuiet(second, overwritten.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        first.prepared().close();
    }

    /**
     * A flush that cannot come: the device's poller took the completions of three small reads
     * (A, B, C, in that order on one queue pair) off the queue in one batch, and delivering A's
     * runs a stage that cancels B, whose own completion waits, undelivered, further down that
     * batch: no poll of the queue can bring it. The cancel waits its bound, then destroys the
     * queue pair (B's work request then counts as flushed) and returns with it destroyed, still
     * inside the stage; C, flushed by that, is posted again on a replacement and completes.
     *
     * <p>The poller is first held in a stage of a larger read until C's bytes landed: soft-RoCE
     * writes a read's bytes and then its completion, in the order the reads were posted, so A's and
     * B's completions are in the queue by then.
     */
    @Test
    void cancelOfAReadWhoseCompletionThePollerHoldsUndelivered_destroysItsQueuePair_andReturns() throws Exception {
        holderVerbs.transport().flushBound(Duration.ofMillis(100));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Object decoded = holderVerbs.transport().decodeContext(TokenRefs.refFor(remote, VerbsTransportProvider.NAME));
        Submitted holding = submitRead(Deadline.after(TIMEOUT), 8 * MIB, decoded);
        CompletableFuture<String> held = holding.future.thenApply(ok -> {
            String name = Thread.currentThread().getName();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return name;
        });
        assertFalse(holding.future.isDone(), "the stage was in place before the read completed");
        holding.awaitStarted();
        try {
            while (!holding.future.isDone()) {      // the poller is now held in the stage (checked below)
                Thread.onSpinWait();
            }
            Submitted a = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            Submitted b = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            Submitted c = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            CompletableFuture<Integer> undestroyedWhenCancelReturned = a.future.thenApply(ok -> {
                assertTrue(b.future.cancel(true), "B was not delivered yet");
                return holderVerbs.transport().brokenQueuePairsNotDestroyed();
            });
            long end = System.nanoTime() + TIMEOUT.toNanos();
            while (c.local.get(ValueLayout.JAVA_LONG, 4096 - 8) == 0) {
                assertTrue(System.nanoTime() < end, "C's bytes did not land within " + TIMEOUT);
                Thread.onSpinWait();
            }
            assertFalse(a.future.isDone(), "nobody delivered A's completion while the poller was held");
            release.countDown();

            assertEquals(0, undestroyedWhenCancelReturned.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS),
                    "queue pairs out of service but not destroyed when B's cancel returned");
            assertTrue(held.get().startsWith("rdma4j-verbs-poller-"), "the poller was the one held: " + held.get());
            c.future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertAll(
                    () -> assertTrue(b.future.isCancelled()),
                    () -> assertEquals(-1, buffer.segment().asSlice(0, 4096).mismatch(c.local), "C's bytes"));
            a.prepared.close();
            b.prepared.close();
            c.prepared.close();
        } finally {
            release.countDown();
        }
        holding.prepared.close();
    }

    /**
     * The same cancel, with a flush bound far beyond the test's patience: the cancel, run by the
     * poller in A's stage, delivers the rest of the batch the poller is delivering (B's completion
     * among it) itself, instead of waiting for a flush no poll can bring until the bound destroys
     * the queue pair. It returns with B accounted for, C completes with its bytes. Failed before
     * the fix: the cancel waited out the bound (an hour here), and the stage did not complete
     * within the test's 120 s.
     */
    @Test
    void cancelOfAReadWhoseCompletionThePollerHoldsUndelivered_returnsWithoutWaitingOutTheFlushBound() throws Exception {
        holderVerbs.transport().flushBound(Duration.ofHours(1));
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Object decoded = holderVerbs.transport().decodeContext(TokenRefs.refFor(remote, VerbsTransportProvider.NAME));
        Submitted holding = submitRead(Deadline.after(TIMEOUT), 8 * MIB, decoded);
        CompletableFuture<String> held = holding.future.thenApply(ok -> {
            String name = Thread.currentThread().getName();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return name;
        });
        assertFalse(holding.future.isDone(), "the stage was in place before the read completed");
        holding.awaitStarted();
        try {
            while (!holding.future.isDone()) {      // the poller is now held in the stage (checked below)
                Thread.onSpinWait();
            }
            Submitted a = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            Submitted b = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            Submitted c = submitRead(Deadline.after(TIMEOUT), 4096, decoded);
            CompletableFuture<Boolean> cancelled = a.future.thenApply(ok -> b.future.cancel(true));
            long end = System.nanoTime() + TIMEOUT.toNanos();
            while (c.local.get(ValueLayout.JAVA_LONG, 4096 - 8) == 0) {
                assertTrue(System.nanoTime() < end, "C's bytes did not land within " + TIMEOUT);
                Thread.onSpinWait();
            }
            assertFalse(a.future.isDone(), "nobody delivered A's completion while the poller was held");
            release.countDown();

            assertTrue(cancelled.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "B was not delivered before its cancel");
            assertTrue(held.get().startsWith("rdma4j-verbs-poller-"), "the poller was the one held: " + held.get());
            c.future.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertAll(
                    () -> assertTrue(b.future.isCancelled()),
                    () -> assertEquals(-1, buffer.segment().asSlice(0, 4096).mismatch(c.local), "C's bytes"));
            a.prepared.close();
            b.prepared.close();
            c.prepared.close();
        } finally {
            release.countDown();
        }
        holding.prepared.close();
    }

    /**
     * No collateral failures: eight reads of 8 MiB, one action each, share the holder's one queue
     * pair to the owner; cancelling one moves that queue pair to ERROR, which flushes the others'
     * work requests; they are posted again on a replacement queue pair and bring their bytes.
     */
    @Test
    void eightReadsOnOneQueuePair_oneCancelled_theOtherSevenFinishOnAReplacement_withTheirBytes() throws Exception {
        int n = 8;
        long part = SIZE / n;
        List<MemorySegment> locals = registeredLocals(n, part);
        List<CompletableFuture<Void>> reads = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            reads.add(holder.read(remote.slice(i * part, part), locals.get(i), TIMEOUT));
        }
        new Submitted(reads.getFirst(), locals.getFirst(), null).awaitStarted();
        int cancelled = n / 2;

        assertTrue(reads.get(cancelled).cancel(true), "the read was still running");

        for (int i = 0; i < n; i++) {
            if (i != cancelled) {
                int k = i;
                reads.get(i).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                assertEquals(-1, buffer.segment().asSlice(k * part, part).mismatch(locals.get(k)), () -> "read " + k);
            }
        }
    }

    /**
     * The same when one of the eight times out: its deadline moves the queue pair to ERROR; the
     * other seven are posted again on a replacement and bring their bytes. The one with the short
     * deadline is the last: queued behind the seven others (56 MiB, over 2 s at the slowed rate), it
     * cannot finish within its second. (It was the fifth, behind 32 MiB, with memory registered as
     * each read was submitted: in a CI run the registrations under emulation let the first four
     * finish before the fifth was posted, and it finished in time.)
     */
    @Test
    void eightReadsOnOneQueuePair_oneTimedOut_theOtherSevenFinishOnAReplacement_withTheirBytes() throws Exception {
        int n = 8;
        long part = SIZE / n;
        int late = n - 1;
        List<MemorySegment> locals = registeredLocals(n, part);
        List<CompletableFuture<Void>> reads = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            reads.add(holder.read(remote.slice(i * part, part), locals.get(i), i == late ? Duration.ofSeconds(1) : TIMEOUT));
        }

        CompletionException e = assertThrows(CompletionException.class, () -> reads.get(late).join());

        assertInstanceOf(RdmaTimeoutException.class, assertInstanceOf(RdmaSubmitException.class, e.getCause()).getCause());
        for (int i = 0; i < n; i++) {
            if (i != late) {
                int k = i;
                reads.get(i).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                assertEquals(-1, buffer.segment().asSlice(k * part, part).mismatch(locals.get(k)), () -> "read " + k);
            }
        }
    }

    /**
     * {@code n} buffers of {@code size} bytes registered with the holder beforehand: reads into them
     * are posted as they are submitted, with no registration of local memory in between (under
     * emulation one of 8 MiB takes long enough for earlier reads to finish meanwhile).
     */
    private List<MemorySegment> registeredLocals(int n, long size) {
        List<MemorySegment> locals = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            locals.add(holder.allocate(size).join().segment());
        }
        return locals;
    }

    /** A read of the whole remote buffer submitted to the holder's transport directly, as the manager would. */
    private Submitted submitRead(Deadline deadline) {
        return submitRead(deadline, SIZE);
    }

    /** A read of the first {@code size} bytes of the remote buffer, submitted to the holder's transport directly. */
    private Submitted submitRead(Deadline deadline, long size) {
        return submitRead(deadline, size, holderVerbs.transport().decodeContext(TokenRefs.refFor(remote, VerbsTransportProvider.NAME)));
    }

    /**
     * The same, with the remote buffer's context decoded already: ops with a context that the
     * owner checked already are posted in {@code submit}, in the order they are submitted.
     */
    private Submitted submitRead(Deadline deadline, long size, Object decoded) {
        VerbsTransport t = holderVerbs.transport();
        MemorySegment local = managers.arena().allocate(size, 64);
        RemoteBufferRef ref = TokenRefs.refFor(remote, VerbsTransportProvider.NAME);
        LocalMemory prepared = t.prepareLocal(local);
        TransportOp op = new TransportOp(TransportOp.OpType.READ_INTO_LOCAL, local, prepared, ref, decoded, 0);
        return new Submitted(t.submit(List.of(op), deadline), local, prepared);
    }

    private record Submitted(CompletableFuture<Void> future, MemorySegment local, LocalMemory prepared) {
        /** Waits until the first bytes of the read landed (a bounded poll of the local buffer). */
        void awaitStarted() {
            long end = System.nanoTime() + TIMEOUT.toNanos();
            while (local.get(ValueLayout.JAVA_LONG, 0) == 0) {
                assertFalse(future.isDone(), () -> "the read ended before its first bytes landed: " + future);
                assertTrue(System.nanoTime() < end, "no byte of the read landed within " + TIMEOUT);
                Thread.onSpinWait();
            }
        }
    }

    /**
     * Writes the marker over {@code local}, then watches it for {@link #WATCH}.
     *
     * @return bytes that were not the marker any more when the watch ended (or when it first saw one)
     */
    private static long markAndWatch(MemorySegment local) {
        local.fill(MARKER);
        long end = System.nanoTime() + WATCH.toNanos();
        long changed;
        do {
            changed = notMarker(local);
        } while (changed == 0 && System.nanoTime() < end);
        return changed;
    }

    private static long notMarker(MemorySegment local) {
        long marker = 0x5a5a5a5a5a5a5a5aL;
        long n = 0;
        for (long at = 0; at < local.byteSize(); at += 8) {
            long w = local.get(ValueLayout.JAVA_LONG, at);
            if (w != marker) {
                for (int b = 0; b < 8; b++) {
                    n += ((w >>> (8 * b)) & 0xff) != (MARKER & 0xff) ? 1 : 0;
                }
            }
        }
        return n;
    }

    /**
     * The stage saw the marker intact; and once the holder destroyed the queue pair that carried
     * the read and a later read between the same managers completed, the buffer is still the marker.
     */
    private void assertQuiet(Submitted read, long overwrittenWhileWatched) throws Exception {
        assertEquals(0, overwrittenWhileWatched, "bytes of the marker overwritten while the dependent stage watched");
        VerbsTransport t = holderVerbs.transport();
        long end = System.nanoTime() + TIMEOUT.toNanos();
        while (t.brokenQueuePairsNotDestroyed() > 0) {
            assertTrue(System.nanoTime() < end, "the broken queue pair was not destroyed within " + TIMEOUT);
            Thread.onSpinWait();
        }
        fullSpeed();
        MemorySegment later = managers.arena().allocate(4096, 64);
        holder.read(remote.slice(0, 4096), later, TIMEOUT).join();
        assertAll(
                () -> assertEquals(-1, DataPattern.mismatch(later, 7), "the later read"),
                () -> assertEquals(0, notMarker(read.local()), "bytes of the marker overwritten in the end"));
        if (read.prepared() != null) {
            read.prepared().close();
        }
    }

    private static void tc(String... arguments) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("tc"));
        command.addAll(List.of(arguments));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), () -> String.join(" ", command) + ": " + out);
    }
}
