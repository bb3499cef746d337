package io.rdma4j.shm;

import io.rdma4j.spi.Setting;

import java.time.Duration;
import java.util.List;

/**
 * The settings of the same-host transport, all declared by {@link ShmTransportProvider#settings()}
 * and validated when a manager starts. Values resolve, first match wins: the manager builder, the
 * system property, the environment variable, the default.
 */
public final class ShmSettings {

    private ShmSettings() {
    }

    /** {@code true} makes the provider unavailable; TCP (or verbs) then carries same-host traffic. */
    public static final Setting<Boolean> DISABLE = Setting.bool("rdma.shm.disable", "RDMA_SHM_DISABLE", false,
            "Whether to turn the same-host transport off.");

    /**
     * {@code true} skips the owner's permission step: it does not call
     * {@code prctl(PR_SET_PTRACER)} under Yama and tells every holder that attaching is not
     * permitted, which is what the kernel answers a holder without permission. Holders then fall
     * back to the next transport (TCP) for this owner, logging why. For testing the fallback.
     */
    public static final Setting<Boolean> SKIP_PTRACER = Setting.bool("rdma.shm.skipPtracer", "RDMA_SHM_SKIP_PTRACER",
            false, "Skip the owner's ptrace permission step, so that holders are refused and fall back (testing).");

    /**
     * Largest piece one system call copies, in MiB ({@code [1, 1024]}, default 8): between pieces a
     * copy checks its deadline, cancellation and the buffer's release.
     */
    public static final Setting<Integer> CHUNK_MIB = Setting.integer("rdma.shm.chunkMiB", "RDMA_SHM_CHUNK_MB", 8,
            1, 1024, "Largest piece, in MiB, that one same-host copy call moves between deadline and release checks.");

    /**
     * Threads one large copy is split across, the caller's included ({@code [1, 64]}, default 2):
     * an op of at least two chunks is cut into that many parts of whole pages. Smaller ops stay on
     * one thread. Measured here, two threads of {@code process_vm_readv} move 64 MiB about twice as
     * fast as one.
     */
    public static final Setting<Integer> COPY_THREADS = Setting.integer("rdma.shm.copyThreads",
            "RDMA_SHM_COPY_THREADS", 2, 1, 64,
            "Threads one large same-host copy is split across, the caller's included; ops under two chunks use one.");

    /**
     * How long an owner's release waits for a holder's copy in flight before giving up (default
     * 10s); only a stopped holder ever takes that long.
     */
    public static final Setting<Duration> RELEASE_WAIT = Setting.duration("rdma.shm.releaseWait",
            "RDMA_SHM_RELEASE_WAIT", Duration.ofSeconds(10),
            "How long releasing a buffer waits for same-host copies in flight to finish.");

    /** Every setting of the transport. */
    public static List<Setting<?>> all() {
        return List.of(DISABLE, SKIP_PTRACER, CHUNK_MIB, COPY_THREADS, RELEASE_WAIT);
    }
}
