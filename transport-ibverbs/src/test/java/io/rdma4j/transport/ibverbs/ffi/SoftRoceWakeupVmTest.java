package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A poller parked on a completion channel without a timeout is woken by a completion or by its {@link Wakeup}. */
@Tag("softroce")
class SoftRoceWakeupVmTest {

    @Test
    void awaitEvent_noTimeout_signalFromAnotherThread_returnsEmpty() throws Exception {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4, true); Wakeup wakeup = Wakeup.create()) {
            pair.a.cq.requestNotification(false);

            CompletableFuture<Void> signalled = CompletableFuture.runAsync(wakeup::signal);
            Optional<CompletionQueue> woken = pair.a.channel.awaitEvent(-1, wakeup);

            signalled.join();
            assertEquals(Optional.empty(), woken);
        }
    }

    @Test
    void awaitEvent_signalledOnce_wakesOnce_thenACompletionWakesWithItsQueue() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4, true); Arena arena = Arena.ofConfined();
             Wakeup wakeup = Wakeup.create(); SendWorkRequests wrs = SendWorkRequests.allocate(1, 1);
             WorkCompletions wcs = WorkCompletions.allocate(1)) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(64), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(64), RcPair.ACCESS);
            pair.a.cq.requestNotification(false);
            wakeup.signal();
            assertEquals(Optional.empty(), pair.a.channel.awaitEvent(-1, wakeup), "the signal given before the wait");

            wrs.setRdma(0, 1, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED, local, 0, 64, remote.address(), remote.rkey());
            pair.a.qp.postSend(wrs, 1);
            Optional<CompletionQueue> woken = pair.a.channel.awaitEvent(-1, wakeup);

            assertEquals(Optional.of(pair.a.cq), woken, "the signal was taken back: the completion woke the wait");
            assertEquals(1, pair.a.cq.poll(wcs));
        }
    }

    @Test
    void awaitEvent_closedWakeup_refused() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4, true)) {
            Wakeup wakeup = Wakeup.create();
            wakeup.close();
            wakeup.close();     // idempotent

            assertThrows(IllegalStateException.class, () -> pair.a.channel.awaitEvent(0, wakeup));
            assertThrows(IllegalStateException.class, wakeup::signal);
        }
    }

    @Test
    void awaitEvent_timeoutBelowMinusOne_refused() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 4, true); Wakeup wakeup = Wakeup.create()) {
            assertThrows(IllegalArgumentException.class, () -> pair.a.channel.awaitEvent(-2, wakeup));
        }
    }
}
