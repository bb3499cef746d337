package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.MemoryRegion;
import io.rdma4j.spi.LocalMemory;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Local memory as ops use it: one memory region per device of the transport (same order), whose
 * lkeys the work requests on that device carry. {@code owned} regions (prepared local memory) are
 * deregistered by {@link #close}; those of a registered buffer belong to its registration.
 */
final class VerbsLocal implements LocalMemory {

    private static final System.Logger LOG = System.getLogger(VerbsLocal.class.getName());

    private final List<MemoryRegion> regions;
    private final boolean owned;

    VerbsLocal(List<MemoryRegion> regions, boolean owned) {
        this.regions = List.copyOf(regions);
        this.owned = owned;
    }

    /** The lkey on the transport's device number {@code device}. */
    int lkey(int device) {
        return regions.get(device).lkey();
    }

    List<MemoryRegion> regions() {
        return regions;
    }

    @Override
    public MemorySegment segment() {
        return regions.getFirst().segment();
    }

    @Override
    public void close() {
        if (owned) {
            closeAll(regions);
        }
    }

    /** Deregisters each region, logging (not throwing) a failure so that the others are still deregistered. */
    static void closeAll(List<MemoryRegion> regions) {
        for (MemoryRegion r : regions) {
            try {
                r.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "deregistering memory region {0} failed: {1}", r, e.getMessage());
            }
        }
    }

    @Override
    public String toString() {
        return "local memory in " + regions;
    }
}
