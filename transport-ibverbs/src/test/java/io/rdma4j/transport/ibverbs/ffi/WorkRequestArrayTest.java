package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_SEND_WR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_SGE;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The native shape of preallocated work requests: chained, each with its own SGE block, cut only during a post. */
class WorkRequestArrayTest {

    private static long next(SendWorkRequests wrs, int i) {
        return wrs.segment().get(JAVA_LONG, i * IBV_SEND_WR.byteSize() + offset(IBV_SEND_WR, "next"));
    }

    @Test
    void allocate_chainsEachRequestToTheNextAndEndsWithNull() {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(3, 2)) {
            long base = wrs.segment().address();

            assertEquals(base + IBV_SEND_WR.byteSize(), next(wrs, 0));
            assertEquals(base + 2 * IBV_SEND_WR.byteSize(), next(wrs, 1));
            assertEquals(0L, next(wrs, 2));
        }
    }

    @Test
    void terminateAtThenRelink_cutsTheChainForAPostAndRestoresIt() {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(3, 1)) {
            long linked = next(wrs, 1);

            wrs.terminateAt(2);
            long during = next(wrs, 1);
            wrs.relink(2);

            assertEquals(0L, during);
            assertEquals(linked, next(wrs, 1));
        }
    }

    @Test
    void setRdma_oneRange_writesTheRequestAndItsFirstSge() {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(2, 2)) {
            wrs.setSge(1, 0, 0x1000, 64, 0x11);
            wrs.setSge(1, 1, 0x2000, 32, 0x22);

            wrs.setRdma(1, 42, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 2, 0xABCD_0000L, 0x77);

            MemorySegment r = wrs.segment().asSlice(IBV_SEND_WR.byteSize(), IBV_SEND_WR.byteSize());
            assertEquals(42, r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr_id")));
            assertEquals(2, r.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")));
            assertEquals(Ibv.IBV_WR_RDMA_READ, r.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")));
            assertEquals(Ibv.IBV_SEND_SIGNALED, r.get(JAVA_INT, offset(IBV_SEND_WR, "send_flags")));
            assertEquals(0xABCD_0000L, r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr", "rdma", "remote_addr")));
            assertEquals(0x77, r.get(JAVA_INT, offset(IBV_SEND_WR, "wr", "rdma", "rkey")));
            MemorySegment sges = MemorySegment.ofAddress(r.get(JAVA_LONG, offset(IBV_SEND_WR, "sg_list")))
                    .reinterpret(2 * IBV_SGE.byteSize());
            assertEquals(0x2000, sges.get(JAVA_LONG, IBV_SGE.byteSize() + offset(IBV_SGE, "addr")));
            assertEquals(32, sges.get(JAVA_INT, IBV_SGE.byteSize() + offset(IBV_SGE, "length")));
            assertEquals(0x22, sges.get(JAVA_INT, IBV_SGE.byteSize() + offset(IBV_SGE, "lkey")));
        }
    }

    /** Request 0 and its entry 0 as {@code {wr_id, num_sge, opcode, send_flags, imm_data, remote_addr, rkey, addr, length, lkey}}. */
    private static long[] first(SendWorkRequests wrs) {
        MemorySegment r = wrs.segment();
        MemorySegment sge = MemorySegment.ofAddress(r.get(JAVA_LONG, offset(IBV_SEND_WR, "sg_list"))).reinterpret(IBV_SGE.byteSize());
        return new long[] {r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr_id")), r.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")), r.get(JAVA_INT, offset(IBV_SEND_WR, "send_flags")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "imm_data")), r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr", "rdma", "remote_addr")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "wr", "rdma", "rkey")), sge.get(JAVA_LONG, offset(IBV_SGE, "addr")),
                sge.get(JAVA_INT, offset(IBV_SGE, "length")), sge.get(JAVA_INT, offset(IBV_SGE, "lkey"))};
    }

    @Test
    void setOne_afterOtherFillsOfRequestZero_leavesExactlyTheLastValuesInPlace() {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(2, 2)) {
            wrs.setOne(1, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 0x1000, 8, 0x11, 0x9000, 0x21);
            wrs.setOne(2, Ibv.IBV_WR_RDMA_WRITE, 0, 0x1000, 16, 0x11, 0xA000, 0x21);
            long[] afterTwo = first(wrs);
            wrs.setSge(0, 0, 0x5000, 99, 0x55);      // what setOne wrote is gone: it must not trust its memory of it
            wrs.setSge(0, 1, 0x6000, 77, 0x66);
            wrs.setRdma(0, 7, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 2, 0xB000, 0x77);

            wrs.setOne(2, Ibv.IBV_WR_RDMA_WRITE, 0, 0x1000, 16, 0x11, 0xA000, 0x21);

            assertEquals(java.util.Arrays.toString(new long[] {2, 1, Ibv.IBV_WR_RDMA_WRITE, 0, 0, 0xA000, 0x21, 0x1000, 16, 0x11}),
                    java.util.Arrays.toString(afterTwo));
            assertEquals(java.util.Arrays.toString(afterTwo), java.util.Arrays.toString(first(wrs)));
        }
    }

    /** Request {@code i} and its entry 0, as {@link #first} reads request 0. */
    private static long[] request(SendWorkRequests wrs, int i) {
        MemorySegment r = wrs.segment().asSlice(i * IBV_SEND_WR.byteSize(), IBV_SEND_WR.byteSize());
        MemorySegment sge = MemorySegment.ofAddress(r.get(JAVA_LONG, offset(IBV_SEND_WR, "sg_list"))).reinterpret(IBV_SGE.byteSize());
        return new long[] {r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr_id")), r.get(JAVA_INT, offset(IBV_SEND_WR, "num_sge")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "opcode")), r.get(JAVA_INT, offset(IBV_SEND_WR, "send_flags")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "imm_data")), r.get(JAVA_LONG, offset(IBV_SEND_WR, "wr", "rdma", "remote_addr")),
                r.get(JAVA_INT, offset(IBV_SEND_WR, "wr", "rdma", "rkey")), sge.get(JAVA_LONG, offset(IBV_SGE, "addr")),
                sge.get(JAVA_INT, offset(IBV_SGE, "length")), sge.get(JAVA_INT, offset(IBV_SGE, "lkey"))};
    }

    @Test
    void stageThenWriteStaged_writesWhatSetSgeAndSetRdmaWould_andKeepsTheChain() {
        try (SendWorkRequests staged = SendWorkRequests.allocate(3, 2); SendWorkRequests set = SendWorkRequests.allocate(3, 2)) {
            long[][] values = {{1, Ibv.IBV_WR_RDMA_WRITE, Ibv.IBV_SEND_SIGNALED | Ibv.IBV_SEND_INLINE, 0x7f00_1000L, 8, 0x11, 0x9000, 0x21},
                    {0xFFFF_FFFF_FFFFL, Ibv.IBV_WR_RDMA_READ, 0, 0x7f00_2000L, 0x7FFF_FFFF, -5, -1L, -7}};
            set.setSge(0, 1, 0x6000, 77, 0x66);     // entries past the first are left alone by both
            staged.setSge(0, 1, 0x6000, 77, 0x66);
            for (int i = 0; i < values.length; i++) {
                long[] v = values[i];
                staged.stage(i, v[0], (int) v[1], (int) v[2], v[3], (int) v[4], (int) v[5], v[6], (int) v[7]);
                set.setSge(i, 0, v[3], (int) v[4], (int) v[5]);
                set.setRdma(i, v[0], (int) v[1], (int) v[2], 1, v[6], (int) v[7]);
            }
            long base = staged.segment().address();

            staged.writeStaged(2);

            for (int i = 0; i < values.length; i++) {
                assertEquals(java.util.Arrays.toString(request(set, i)), java.util.Arrays.toString(request(staged, i)), "request " + i);
            }
            assertEquals(base + IBV_SEND_WR.byteSize(), next(staged, 0));
            assertEquals(base + 2 * IBV_SEND_WR.byteSize(), next(staged, 1));
            assertEquals(0L, next(staged, 2));
            assertThrows(IndexOutOfBoundsException.class, () -> staged.stage(3, 0, Ibv.IBV_WR_RDMA_WRITE, 0, 0, 0, 0, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> staged.writeStaged(4));
        }
    }

    @Test
    void setRdma_indexOrSgeCountOutOfRange_rejected() {
        try (SendWorkRequests wrs = SendWorkRequests.allocate(2, 1)) {
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.setRdma(2, 0, Ibv.IBV_WR_RDMA_WRITE, 0, 1, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.setRdma(0, 0, Ibv.IBV_WR_RDMA_WRITE, 0, 2, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.setSge(0, 1, 0, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> wrs.terminateAt(0));
        }
    }

    @Test
    void close_twice_isHarmless() {
        SendWorkRequests wrs = SendWorkRequests.allocate(1, 1);

        wrs.close();
        wrs.close();

        assertThrows(IllegalStateException.class, () -> wrs.setSge(0, 0, 0, 0, 0));
    }

    @Test
    void setOne_closed_rejectedEvenWhenNothingChanged() {
        SendWorkRequests wrs = SendWorkRequests.allocate(1, 1);
        wrs.setOne(1, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 0x1000, 8, 0x11, 0x9000, 0x21);

        wrs.close();

        assertThrows(IllegalStateException.class,
                () -> wrs.setOne(1, Ibv.IBV_WR_RDMA_READ, Ibv.IBV_SEND_SIGNALED, 0x1000, 8, 0x11, 0x9000, 0x21));
    }
}
