package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.stream.Stream;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * RDMA WRITE and READ through the bindings alone, on real verbs devices (soft-RoCE, in the VM):
 * two queue pairs on one device, and on two devices at the ends of a veth pair. Each transfer is
 * split into work requests of at most 256 KiB with up to {@value #DEPTH} in flight, and the bytes
 * are compared one for one afterwards.
 */
@Tag("softroce")
class SoftRoceTransferVmTest {

    static final int DEPTH = 64;
    static final long CHUNK = 256 * 1024;

    static Stream<Arguments> transfers() {
        Stream.Builder<Arguments> cases = Stream.builder();
        for (String[] devices : new String[][] {{"rxe0", "rxe0"}, {"rxe0", "rxe1"}}) {
            for (long size : new long[] {8, 4096, (1 << 20) + 1, 64L << 20}) {
                cases.add(Arguments.of(devices[0], devices[1], size));
            }
        }
        return cases.build();
    }

    @ParameterizedTest(name = "{0} -> {1}, {2} bytes")
    @MethodSource("transfers")
    void rdmaWrite_landsEveryByteInTheRemoteBuffer(String deviceA, String deviceB, long size) {
        try (RcPair pair = RcPair.connect(deviceA, deviceB, DEPTH); Arena arena = Arena.ofConfined()) {
            MemorySegment local = arena.allocate(size, 4096);
            MemorySegment remote = arena.allocate(size, 4096);
            fill(local, 0x5EED_0001L);
            MemoryRegion localMr = pair.a.pd.register(local, RcPair.ACCESS);
            MemoryRegion remoteMr = pair.b.pd.register(remote, RcPair.ACCESS);

            int maxInFlight = transfer(pair, Ibv.IBV_WR_RDMA_WRITE, localMr, remoteMr, size);

            assertSame(local, remote);
            assertTrue(size <= CHUNK * 2 || maxInFlight > 1, "work requests in flight at once: " + maxInFlight);
        }
    }

    @ParameterizedTest(name = "{0} -> {1}, {2} bytes")
    @MethodSource("transfers")
    void rdmaRead_bringsEveryByteOfTheRemoteBuffer(String deviceA, String deviceB, long size) {
        try (RcPair pair = RcPair.connect(deviceA, deviceB, DEPTH); Arena arena = Arena.ofConfined()) {
            MemorySegment local = arena.allocate(size, 4096);
            MemorySegment remote = arena.allocate(size, 4096);
            fill(remote, 0x5EED_0002L);
            MemoryRegion localMr = pair.a.pd.register(local, RcPair.ACCESS);
            MemoryRegion remoteMr = pair.b.pd.register(remote, RcPair.ACCESS);

            int maxInFlight = transfer(pair, Ibv.IBV_WR_RDMA_READ, localMr, remoteMr, size);

            assertSame(remote, local);
            assertTrue(size <= CHUNK * 2 || maxInFlight > 1, "work requests in flight at once: " + maxInFlight);
        }
    }

    /**
     * Moves {@code size} bytes between side A's {@code local} and side B's {@code remote} with
     * signaled work requests of at most {@link #CHUNK} bytes, keeping up to {@link #DEPTH} in
     * flight; fails on any unsuccessful completion. Returns the most that were in flight at once.
     */
    static int transfer(RcPair pair, int opcode, MemoryRegion local, MemoryRegion remote, long size) {
        int chunks = (int) ((size + CHUNK - 1) / CHUNK);
        int maxInFlight = 0;
        long deadline = System.nanoTime() + RcPair.DEADLINE.toNanos();
        try (SendWorkRequests wrs = SendWorkRequests.allocate(DEPTH, 1); WorkCompletions wcs = WorkCompletions.allocate(DEPTH)) {
            int posted = 0;
            int done = 0;
            while (done < chunks) {
                int batch = 0;
                while (posted + batch < chunks && posted + batch - done < DEPTH) {
                    int c = posted + batch;
                    long offset = c * CHUNK;
                    int length = (int) Math.min(CHUNK, size - offset);
                    wrs.setRdma(batch, c, opcode, Ibv.IBV_SEND_SIGNALED, local, offset, length, remote.address() + offset,
                            remote.rkey());
                    batch++;
                }
                if (batch > 0) {
                    pair.a.qp.postSend(wrs, batch);
                    posted += batch;
                    maxInFlight = Math.max(maxInFlight, posted - done);
                }
                int n = pair.a.cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    if (wcs.status(i) != Ibv.IBV_WC_SUCCESS) {
                        fail("work request " + wcs.workRequestId(i) + " failed: " + WorkCompletions.statusText(wcs.status(i)));
                    }
                    assertEquals(opcode == Ibv.IBV_WR_RDMA_WRITE ? Ibv.IBV_WC_RDMA_WRITE : Ibv.IBV_WC_RDMA_READ, wcs.opcode(i));
                }
                done += n;
                if (n == 0 && System.nanoTime() - deadline > 0) {
                    fail("only " + done + " of " + chunks + " work requests completed within " + RcPair.DEADLINE);
                }
            }
        }
        return maxInFlight;
    }

    /** Fills {@code s} with a pattern that differs at every 8-byte word and depends on {@code seed}. */
    static void fill(MemorySegment s, long seed) {
        long i = 0;
        for (; i + 8 <= s.byteSize(); i += 8) {
            s.set(JAVA_LONG_UNALIGNED, i, (seed + i) * 0x9E37_79B9_7F4A_7C15L);
        }
        for (; i < s.byteSize(); i++) {
            s.set(JAVA_BYTE, i, (byte) (seed * 31 + i));
        }
    }

    static void assertSame(MemorySegment expected, MemorySegment actual) {
        long at = expected.mismatch(actual);
        if (at != -1) {
            fail("bytes differ first at offset " + at + " of " + expected.byteSize());
        }
    }
}
