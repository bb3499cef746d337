package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_MR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Registered memory ({@code struct ibv_mr}, from {@code ibv_reg_mr}). The keys and address are
 * read once at registration. Owned by its {@link ProtectionDomain}; the memory itself stays owned
 * by the caller, who must keep it alive until this region is closed.
 */
public final class MemoryRegion implements AutoCloseable {

    private final ProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment segment;
    private final int lkey;
    private final int rkey;
    private final AtomicBoolean closed = new AtomicBoolean();

    private MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment segment) {
        this.pd = pd;
        this.mr = mr;
        this.segment = segment;
        this.lkey = mr.get(JAVA_INT, offset(IBV_MR, "lkey"));
        this.rkey = mr.get(JAVA_INT, offset(IBV_MR, "rkey"));
    }

    static MemoryRegion register(ProtectionDomain pd, MemorySegment segment, int accessFlags) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment mr = (MemorySegment) IbvFunctions.REG_MR.invokeExact(state, pd.pointer(), segment,
                    segment.byteSize(), accessFlags);
            if (mr.address() == 0) {
                throw IbverbsException.registrationFailed(segment.byteSize(), Downcalls.errno(state));
            }
            return new MemoryRegion(pd, mr.reinterpret(IBV_MR.byteSize()), segment);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The key local work requests name this memory with (in {@code ibv_sge.lkey}).
     *
     * @return the lkey
     */
    public int lkey() {
        return lkey;
    }

    /**
     * The key a peer names this memory with in RDMA READ and WRITE work requests.
     *
     * @return the rkey
     */
    public int rkey() {
        return rkey;
    }

    /**
     * The address of the first registered byte: what a peer puts in {@code remote_addr}.
     *
     * @return the virtual address of the segment
     */
    public long address() {
        return segment.address();
    }

    /**
     * The number of bytes registered.
     *
     * @return the segment's size
     */
    public long length() {
        return segment.byteSize();
    }

    /**
     * The registered memory (not owned by this region).
     *
     * @return the segment passed to {@link ProtectionDomain#register}
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Deregisters the memory ({@code ibv_dereg_mr}). Idempotent. Work requests still using the
     * keys fail with a protection or access error afterwards.
     *
     * @throws IbverbsException if the call fails (the region then stays registered, so a later
     *                          close can retry)
     */
    @Override
    public void close() {
        if (Calls.destroyOnce(closed, "ibv_dereg_mr", IbvFunctions.DEREG_MR, mr)) {
            pd.removed(this);
        }
    }

    @Override
    public String toString() {
        return "MemoryRegion[address=0x" + Long.toHexString(address()) + ", length=" + length() + ", lkey=0x"
                + Integer.toHexString(lkey) + ", rkey=0x" + Integer.toHexString(rkey) + (closed.get() ? ", closed]" : "]");
    }
}
