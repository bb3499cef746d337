package io.rdma4j.transport.shm;

import io.rdma4j.unix.Errno;
import io.rdma4j.transport.shm.ffi.Libc;

/**
 * Whether same-host peers may cross-memory attach ({@code process_vm_readv}/{@code writev}) to
 * this process, and the one way this module may widen that: {@code prctl(PR_SET_PTRACER,
 * PR_SET_PTRACER_ANY)}, only when the user opted in with {@link ShmSettings#ALLOW_ANY_PTRACER}.
 *
 * <p>The prctl is process-wide, so it is counted: the first manager that applies it makes the
 * call (and logs a WARNING naming the consequence), the last one that applied it to close undoes
 * it ({@code prctl(PR_SET_PTRACER, 0)}). Thread-safe.
 */
final class AnyPtracer {

    private static final System.Logger LOG = System.getLogger(AnyPtracer.class.getName());

    /** Open managers that applied the prctl; guarded by the class. */
    private static int appliedBy;

    private AnyPtracer() {
    }

    /**
     * What an owner does under {@code scope}.
     *
     * @param setAnyPtracer whether to call {@code prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY)}
     * @param refusal       "" when same-user peers may cross-memory attach to this process (given
     *                      the prctl, if any, succeeds); otherwise why not, which goes into tokens:
     *                      holders then map this owner's memory files, and reach its other
     *                      registered memory through its staging copy ({@link StagingServer})
     */
    record Plan(boolean setAnyPtracer, String refusal) {
    }

    /**
     * The owner's plan: nothing is loosened unless {@code allowAnyPtracer} and Yama's
     * {@code ptrace_scope} is 1, the only scope the prctl can widen.
     *
     * @param scope           the Yama scope in force
     * @param allowAnyPtracer the value of {@link ShmSettings#ALLOW_ANY_PTRACER}
     * @return the plan
     */
    static Plan plan(PtraceScope scope, boolean allowAnyPtracer) {
        return switch (scope) {
            case NO_YAMA, CLASSIC -> new Plan(false, "");
            case RESTRICTED -> allowAnyPtracer ? new Plan(true, "")
                    : new Plan(false, "Yama ptrace_scope=1 lets only the owner's ancestors attach to it, and "
                    + ShmSettings.ALLOW_ANY_PTRACER.key() + " is false");
            case ADMIN_ONLY -> new Plan(false, "Yama ptrace_scope=2 lets only CAP_SYS_PTRACE holders attach");
            case NO_ATTACH -> new Plan(false, "Yama ptrace_scope=3 forbids attaching");
        };
    }

    /**
     * Applies the prctl for one more manager (the call itself only for the first).
     *
     * @return "" when applied (the caller must {@link #release()} once when it closes); otherwise
     *         why the call failed (nothing to release)
     */
    static synchronized String apply() {
        if (appliedBy == 0) {
            int errno = Libc.allowAnyPtracer();
            if (errno != 0) {
                return "prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY) failed under Yama ptrace_scope=1: "
                        + Errno.describe(errno);
            }
            LOG.log(System.Logger.Level.WARNING, "shm: " + ShmSettings.ALLOW_ANY_PTRACER.key() + "=true: called "
                    + "prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY); from now on every process of this user may ptrace "
                    + "this whole JVM (read and write all its memory, inject code), not only the registered buffers, "
                    + "until the last manager that applied it closes");
        }
        appliedBy++;
        return "";
    }

    /** Ends one manager's {@link #apply()}; the last one undoes the prctl. */
    static synchronized void release() {
        if (appliedBy <= 0) {
            throw new IllegalStateException("prctl(PR_SET_PTRACER) released more often than applied");
        }
        if (--appliedBy == 0) {
            int errno = Libc.clearPtracer();
            if (errno != 0) {
                LOG.log(System.Logger.Level.WARNING, "shm: could not undo prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY): "
                        + "{0}; every process of this user may still ptrace this JVM", Errno.describe(errno));
            } else {
                LOG.log(System.Logger.Level.INFO, "shm: prctl(PR_SET_PTRACER, 0): Yama again lets only this "
                        + "process's ancestors ptrace it");
            }
        }
    }

    /**
     * How many open managers applied the prctl (0: this process never loosened, or undid it).
     *
     * @return the count
     */
    static synchronized int appliedBy() {
        return appliedBy;
    }
}
