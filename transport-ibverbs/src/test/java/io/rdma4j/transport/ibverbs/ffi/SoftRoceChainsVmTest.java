package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the transport's chains of work requests rely on, on soft-RoCE: a chain posted in one
 * {@code ibv_post_send} with only its last request signalled completes once, for all of them; an
 * unsignalled request that fails still reports its error, and each request flushed after it
 * reports its flush, while those done before it report nothing; a queue pair gives at least the
 * inline data it asked for, and an inline write needs no registered source.
 */
@Tag("softroce")
class SoftRoceChainsVmTest {

    private static final int CHAIN = 32;

    @Test
    void queuePairAskingForInlineData_isGivenAtLeastThat() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 64, false, 64)) {
            int given = pair.a.qp.maxInlineData();
            System.out.println("rxe0: a queue pair asking for 64 bytes of inline data was given max_inline_data " + given);
            assertTrue(given >= 64, "max_inline_data " + given);
        }
    }

    @Test
    void inlineWrite_fromUnregisteredMemory_withNoKey_arrives() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 64, false, 64); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(1, 1); WorkCompletions wcs = WorkCompletions.allocate(4)) {
            MemorySegment source = arena.allocate(64);      // not registered anywhere
            for (int i = 0; i < 64; i++) {
                source.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 7 + 1));
            }
            MemoryRegion remote = pair.b.pd.register(arena.allocate(64), RcPair.ACCESS);

            wrs.setSge(0, 0, source.address(), 64, 0);
            wrs.setRdma(0, 9, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED | Ibv.IBV_SEND_INLINE, 1, remote.address(),
                    remote.rkey());
            pair.a.qp.postSend(wrs, 1);
            int[] status = new int[1];
            RcPair.await(pair.a.cq, wcs, 1, status);

            assertAll(
                    () -> assertEquals(Ibv.IBV_WC_SUCCESS, status[0], WorkCompletions.statusText(status[0])),
                    () -> assertEquals(-1, remote.segment().mismatch(source)));
        }
    }

    @Test
    void chainWithOnlyItsLastRequestSignalled_completesOnce_andEveryWriteArrives() {
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 64); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(CHAIN, 1); WorkCompletions wcs = WorkCompletions.allocate(64)) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(CHAIN * 8L), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(CHAIN * 8L), RcPair.ACCESS);
            for (int i = 0; i < CHAIN * 8; i++) {
                local.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 5));
            }
            for (int i = 0; i < CHAIN; i++) {
                wrs.setRdma(i, 100 + i, Ibv.IBV_WR_RDMA_WRITE, i == CHAIN - 1 ? Ibv.IBV_SEND_SIGNALED : 0, local, i * 8L, 8,
                        remote.address() + i * 8L, remote.rkey());
            }
            pair.a.qp.postSend(wrs, CHAIN);

            List<long[]> seen = awaitUntil(pair.a.cq, wcs, 100 + CHAIN - 1);

            assertAll(
                    () -> assertEquals(1, seen.size(), "completions"),
                    () -> assertEquals(Ibv.IBV_WC_SUCCESS, seen.getFirst()[1]),
                    () -> assertEquals(0, pair.a.cq.poll(wcs), "no completion after the last request's"),
                    () -> assertEquals(-1, remote.segment().mismatch(local.segment())));
        }
    }

    @Test
    void unsignalledRequestThatFails_reportsItsError_eachLaterOneItsFlush_theEarlierOnesNothing() {
        int bad = 3;
        int n = 8;
        try (RcPair pair = RcPair.connect("rxe0", "rxe1", 64); Arena arena = Arena.ofConfined();
             SendWorkRequests wrs = SendWorkRequests.allocate(n, 1); WorkCompletions wcs = WorkCompletions.allocate(64)) {
            MemoryRegion local = pair.a.pd.register(arena.allocate(n * 8L), RcPair.ACCESS);
            MemoryRegion remote = pair.b.pd.register(arena.allocate(n * 8L), RcPair.ACCESS);
            for (int i = 0; i < n; i++) {
                wrs.setRdma(i, 200 + i, Ibv.IBV_WR_RDMA_WRITE, i == n - 1 ? Ibv.IBV_SEND_SIGNALED : 0, local, i * 8L, 8,
                        remote.address() + i * 8L, i == bad ? remote.rkey() ^ 0x00A5_A500 : remote.rkey());
            }
            pair.a.qp.postSend(wrs, n);

            List<long[]> seen = awaitUntil(pair.a.cq, wcs, 200 + n - 1);

            List<String> got = seen.stream().map(c -> c[0] - 200 + ":" + WorkCompletions.statusText((int) c[1])).toList();
            List<String> expected = new ArrayList<>();
            expected.add(bad + ":" + WorkCompletions.statusText(Ibv.IBV_WC_REM_ACCESS_ERR));
            for (int i = bad + 1; i < n; i++) {
                expected.add(i + ":" + WorkCompletions.statusText(Ibv.IBV_WC_WR_FLUSH_ERR));
            }
            assertEquals(expected, got);
        }
    }

    /** Polls {@code cq} until the completion of {@code lastId} came; returns every completion taken (id, status), in order. */
    private static List<long[]> awaitUntil(CompletionQueue cq, WorkCompletions wcs, long lastId) {
        long deadline = System.nanoTime() + RcPair.DEADLINE.toNanos();
        List<long[]> seen = new ArrayList<>();
        while (seen.isEmpty() || seen.getLast()[0] != lastId) {
            int got = cq.poll(wcs);
            for (int i = 0; i < got; i++) {
                seen.add(new long[]{wcs.workRequestId(i), wcs.status(i)});
            }
            if (got == 0 && System.nanoTime() - deadline > 0) {
                fail("no completion of work request " + lastId + " within " + RcPair.DEADLINE + "; got " + seen.size());
            }
        }
        return seen;
    }
}
