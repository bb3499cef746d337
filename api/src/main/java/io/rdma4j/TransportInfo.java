package io.rdma4j;

import java.util.Objects;

/**
 * What a manager found out about one discovered transport when it started.
 *
 * @param name      the provider's name ({@code tcp}, {@code ibverbs}, {@code shm}, ...)
 * @param priority  the provider's priority; higher is tried first
 * @param available whether the provider said it can run here
 * @param open      whether the manager opened it and uses it (an available transport may fail to open)
 * @param reason    why it is not available or failed to open; empty when {@code open}
 */
public record TransportInfo(String name, int priority, boolean available, boolean open, String reason) {

    /**
     * Checks the fields.
     *
     * @throws NullPointerException     if {@code name} or {@code reason} is {@code null}
     * @throws IllegalArgumentException if an open transport is said to be unavailable
     */
    public TransportInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(reason, "reason");
        if (open && !available) {
            throw new IllegalArgumentException("an open transport is available");
        }
    }
}
