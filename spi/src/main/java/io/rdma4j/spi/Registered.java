package io.rdma4j.spi;

import java.util.Objects;

/**
 * What {@link Transport#register} answers: the context bytes that go into the token, or that the
 * transport cannot serve this memory.
 */
public final class Registered {

    private final byte[] context;
    private final LocalMemory localMemory;
    private final String notApplicableReason;

    private Registered(byte[] context, LocalMemory localMemory, String notApplicableReason) {
        this.context = context;
        this.localMemory = localMemory;
        this.notApplicableReason = notApplicableReason;
    }

    /**
     * The transport registered the memory.
     *
     * @param context the bytes a peer's instance of the transport needs to reach the buffer, at
     *                most {@link Transport#MAX_CONTEXT_BYTES}; copied
     * @return the answer
     * @throws IllegalArgumentException if {@code context} is longer than {@link Transport#MAX_CONTEXT_BYTES}
     */
    public static Registered context(byte[] context) {
        return context(context, null);
    }

    /**
     * The transport registered the memory, and what it created can also serve ops whose local
     * segments lie inside this memory (verbs: the memory region's lkey), so that memory registered
     * with the manager is never prepared a second time.
     *
     * @param context     the context bytes, as for {@link #context(byte[])}; copied
     * @param localMemory the handle for local use, or {@code null}; owned by the transport (the
     *                    manager never closes it), valid until {@link Transport#release} of the id
     * @return the answer
     * @throws IllegalArgumentException if {@code context} is longer than {@link Transport#MAX_CONTEXT_BYTES}
     */
    public static Registered context(byte[] context, LocalMemory localMemory) {
        Objects.requireNonNull(context, "context");
        if (context.length > Transport.MAX_CONTEXT_BYTES) {
            throw new IllegalArgumentException("a transport context of " + context.length + " bytes exceeds "
                    + Transport.MAX_CONTEXT_BYTES);
        }
        return new Registered(context.clone(), localMemory, null);
    }

    /**
     * The transport cannot serve this memory (a shared-memory transport for memory it did not
     * allocate, a device that cannot map it). Not an error: the buffer is registered with the
     * other transports and the token omits this one.
     *
     * @param reason why, for the manager's log
     * @return the answer
     */
    public static Registered notApplicable(String reason) {
        return new Registered(null, null, Objects.requireNonNull(reason, "reason"));
    }

    /**
     * Whether the transport took the memory.
     *
     * @return {@code true} for {@link #context}, {@code false} for {@link #notApplicable}
     */
    public boolean applicable() {
        return context != null;
    }

    /**
     * The context bytes.
     *
     * @return a copy of the bytes
     * @throws IllegalStateException if the answer is {@link #notApplicable}
     */
    public byte[] contextBytes() {
        if (context == null) {
            throw new IllegalStateException("not applicable: " + notApplicableReason);
        }
        return context.clone();
    }

    /**
     * The handle the registration offers for local use of its memory.
     *
     * @return the handle, or {@code null}
     */
    public LocalMemory localMemory() {
        return localMemory;
    }

    /**
     * Why the transport cannot serve the memory.
     *
     * @return the reason, or {@code null} when {@link #applicable()}
     */
    public String notApplicableReason() {
        return notApplicableReason;
    }

    @Override
    public String toString() {
        return applicable() ? "Registered[" + context.length + " context bytes]" : "Registered[not applicable: " + notApplicableReason + "]";
    }
}
