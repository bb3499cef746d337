package io.rdma4j.transport.shm;

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
     * {@code true} loosens the kernel's protection of this whole process, for the sake of the
     * same-host transport: under Yama's {@code ptrace_scope = 1} (Ubuntu's default), the owner
     * calls {@code prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)}, after which <b>every process of
     * this user may ptrace this JVM</b>: read and write all its memory and inject code, not only
     * the registered buffers. Logged at WARNING when applied; undone
     * ({@code prctl(PR_SET_PTRACER, 0)}) when the last manager that applied it closes. It lets
     * same-host holders copy this owner's {@code register()}ed memory with cross-memory attach
     * instead of the owner's staging copy. Default {@code false}: nothing is loosened, holders map
     * {@code allocate()}d buffers and reach other registered memory through the owner's staging
     * copy ({@link #FORCE_STAGING}). Has
     * no effect under any other scope (0 or no Yama: nothing is needed; 2 and 3: the prctl cannot help).
     */
    public static final Setting<Boolean> ALLOW_ANY_PTRACER = Setting.bool("rdma.shm.allowAnyPtracer",
            "RDMA_SHM_ALLOW_ANY_PTRACER", false,
            "Under Yama ptrace_scope=1, let every process of this user ptrace this whole JVM (prctl PR_SET_PTRACER_ANY, "
                    + "logged at WARNING, undone when the last manager closes) so that same-host peers can copy "
                    + "register()ed memory directly; false: they reach it through this process's staging copy.");

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
     * 10s); only a stopped or hostile holder ever takes that long, and each holder at most once
     * (it is not waited for again, nor granted more buffers: {@link AccessTable#revoke}).
     */
    public static final Setting<Duration> RELEASE_WAIT = Setting.duration("rdma.shm.releaseWait",
            "RDMA_SHM_RELEASE_WAIT", Duration.ofSeconds(10),
            "How long releasing a buffer waits for same-host copies in flight to finish; a holder that keeps "
                    + "it waiting that long is not waited for again, nor granted more buffers.");

    /**
     * {@code true} makes this holder reach <em>every</em> buffer of another process through its
     * owner's staging copy (two copies, the owner's CPU; no ptrace rights needed), even memory it
     * could map or cross-memory attach. Default {@code false}: that path is taken only for
     * {@code register()}ed memory where cross-memory attach is not permitted (Yama
     * {@code ptrace_scope} 1 without {@link #ALLOW_ANY_PTRACER}, or 2). For tests and measurement.
     */
    public static final Setting<Boolean> FORCE_STAGING = Setting.bool("rdma.shm.forceStaging",
            "RDMA_SHM_FORCE_STAGING", false,
            "Reach every buffer of another process through its owner's staging copy (two copies, no ptrace rights), "
                    + "even where mapping or cross-memory attach would work; for tests and measurement.");

    /** Every setting of the transport. */
    public static List<Setting<?>> all() {
        return List.of(DISABLE, ALLOW_ANY_PTRACER, CHUNK_MIB, COPY_THREADS, RELEASE_WAIT, FORCE_STAGING);
    }
}
