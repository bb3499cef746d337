package io.rdma4j.spi;

import java.util.Objects;

/**
 * Whether a provider can run in this process and, when it cannot, why, in words a person can
 * act on ("libibverbs.so.1 not found", "disabled by rdma.disableIbverbs=true"). Immutable.
 */
public final class Availability {

    private static final Availability AVAILABLE = new Availability(true, "");

    private final boolean available;
    private final String reason;

    private Availability(boolean available, String reason) {
        this.available = available;
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * The provider may be opened.
     *
     * @return the shared available instance, whose reason is empty
     */
    public static Availability available() {
        return AVAILABLE;
    }

    /**
     * The provider may not be opened, for the given human-readable reason.
     *
     * @param reason why the provider cannot run, in words a person can act on; not blank
     * @return a new unavailable instance carrying {@code reason}
     * @throws IllegalArgumentException if the reason is blank
     */
    public static Availability unavailable(String reason) {
        if (reason == null || reason.isBlank()) {
            throw new IllegalArgumentException("an unavailable provider must say why");
        }
        return new Availability(false, reason);
    }

    /**
     * Whether {@link TransportProvider#open} may be called.
     *
     * @return {@code true} if available; {@code false} if {@link #reason()} says why not
     */
    public boolean isAvailable() {
        return available;
    }

    /**
     * Why not; empty when available.
     *
     * @return the reason given to {@link #unavailable}, or {@code ""}
     */
    public String reason() {
        return reason;
    }

    /**
     * Returns quietly when available, otherwise throws: what {@link TransportProvider#open} does
     * when asked to open a provider that cannot run here.
     *
     * @param transport the transport's name, for the message, e.g. {@code "shm"}
     * @throws IllegalStateException {@code "<transport> is unavailable: <reason>"} when not available
     */
    public void requireAvailable(String transport) {
        if (!available) {
            throw new IllegalStateException(transport + " is unavailable: " + reason);
        }
    }

    @Override
    public String toString() {
        return available ? "available" : "unavailable: " + reason;
    }
}
