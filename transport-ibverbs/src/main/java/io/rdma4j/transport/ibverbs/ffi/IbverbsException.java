package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.unix.ResourceLimits;

/**
 * A verbs call failed. The message names the C function and, when the call reported one, the
 * errno value and its text, e.g. {@code "ibv_create_qp failed: errno 22 (Invalid argument)"}.
 * Unchecked: these are environment failures (no such device, limits, driver refusals) or
 * misuse the driver detected.
 */
public final class IbverbsException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    IbverbsException(String function, int errno, String message) {
        super(message);
        this.function = function;
        this.errno = errno;
    }

    /** {@code "<function> failed: errno N (text)"}, plus {@code detail} when not empty. */
    static IbverbsException failed(String function, int errno, String detail) {
        String message = function + " failed: " + Errno.describe(errno);
        return new IbverbsException(function, errno, detail.isEmpty() ? message : message + "; " + detail);
    }

    /**
     * The failure of {@code ibv_reg_mr}; for ENOMEM the message says that the locked-memory limit
     * is the likely cause and gives the current {@code ulimit -l}.
     */
    static IbverbsException registrationFailed(long length, int errno) {
        String what = "registering " + length + " bytes";
        if (errno != Errno.ENOMEM) {
            return failed("ibv_reg_mr", errno, what);
        }
        return failed("ibv_reg_mr", errno, what + "; the likely cause is the locked-memory limit: ulimit -l is "
                + ResourceLimits.lockedMemory() + " (KiB) for this process; raise it (ulimit -l, systemd LimitMEMLOCK, "
                + "docker --ulimit memlock) or grant CAP_IPC_LOCK");
    }

    /**
     * The C function that failed.
     *
     * @return e.g. {@code "ibv_reg_mr"}
     */
    public String function() {
        return function;
    }

    /**
     * Whether the call reported {@code EFAULT}: for {@code ibv_reg_mr}, memory the kernel would not
     * pin as asked (e.g. {@code PROT_READ} pages on a kernel that pins every region for writing).
     *
     * @return {@code errno() == EFAULT}
     */
    public boolean badAddress() {
        return errno == Errno.EFAULT;
    }

    /**
     * The errno value the call reported.
     *
     * @return the value, or 0 when the call reported none (e.g. a device name that does not exist)
     */
    public int errno() {
        return errno;
    }
}
