package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.IbverbsException;
import io.rdma4j.transport.ibverbs.queuepair.QueuePairLifecycle;
import io.rdma4j.spi.Registered;

import java.lang.foreign.MemorySegment;

/**
 * The access a registration's memory regions get. A writable segment: local write, remote read
 * and remote write. A read-only segment (a read-only registration): remote read only, so the
 * device refuses peers' writes, and no local write either, so that {@code PROT_READ} pages (a
 * read-only file mapping) can be pinned; its lkeys then serve only ops that read it (the manager
 * does not offer them to reads into that memory).
 *
 * <p>Kernels before Linux 6.2 pin every region's pages for writing whatever its access
 * ({@code ib_umem_get}: {@code FOLL_WRITE | FOLL_FORCE} for a region without write access), which
 * {@code PROT_READ} shared pages refuse with {@code EFAULT}: there a read-only file mapping is not
 * applicable to this transport (the token omits it; other transports serve it), and a private
 * mapping viewed read-only is what verbs can register (at the price of a copy of each page).
 */
final class RegionAccess {

    /** What a read-only segment the kernel would not pin is answered with, before the driver's words. */
    static final String PAGES_REFUSED = "the kernel refused to pin read-only memory (PROT_READ pages: kernels "
            + "before Linux 6.2 pin every memory region for writing); a private mapping viewed read-only can be registered";

    private RegionAccess() {
    }

    /** The {@code ibv_reg_mr} access flags for a registration of {@code segment}. */
    static int of(MemorySegment segment) {
        return segment.isReadOnly() ? Ibv.IBV_ACCESS_REMOTE_READ : QueuePairLifecycle.QP_ACCESS;
    }

    /**
     * The answer to a registration of {@code segment} that {@code failure} ended: not applicable
     * for read-only memory the kernel would not pin ({@code EFAULT}); any other failure is thrown.
     */
    static Registered declinedOrThrow(MemorySegment segment, IbverbsException failure) {
        if (segment.isReadOnly() && failure.badAddress()) {
            return Registered.notApplicable(PAGES_REFUSED + " (" + failure.getMessage() + ")");
        }
        throw failure;
    }
}
