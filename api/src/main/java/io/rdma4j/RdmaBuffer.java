package io.rdma4j;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import io.rdma4j.internal.Errors;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Memory the manager allocated, registered with every transport: the safe way to share a
 * buffer ({@link RdmaManager#allocate(long)}).
 *
 * <p><b>Ownership.</b> The manager owns the memory. It stays valid until {@link #close()}; it is
 * freed only after the registration was released on every transport and the last in-flight
 * remote access finished, so no transport ever touches freed memory. After {@code close()} the
 * segment must not be used: accesses throw {@link IllegalStateException} once it is freed.
 * Closing the manager closes every buffer it allocated.
 *
 * <p><b>Writable.</b> The registration is writable: its token lets holders write. For a read-only
 * token to the same memory, register a read-only view ({@code register(segment().asReadOnly())}):
 * a second registration, released on its own, which peers may only read.
 */
public final class RdmaBuffer implements AutoCloseable {

    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(60);

    private final RdmaManager manager;
    private final MemorySegment segment;
    private final RdmaRemoteBuffer remote;
    private final AtomicBoolean closed = new AtomicBoolean();

    RdmaBuffer(RdmaManager manager, MemorySegment segment, RdmaRemoteBuffer remote) {
        this.manager = manager;
        this.segment = segment;
        this.remote = remote;
    }

    /**
     * The memory, for local reads and writes. Page-aligned, zero-filled when allocated.
     *
     * @return the segment; the manager owns it, and it must not be used after {@link #close()}
     */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * The token to send to peers.
     *
     * @return the buffer's token
     */
    public RdmaRemoteBuffer remote() {
        return remote;
    }

    /**
     * The buffer id.
     *
     * @return the id, the same as {@code remote().id()}
     */
    public long id() {
        return remote.id();
    }

    /**
     * Length in bytes.
     *
     * @return the size passed to {@link RdmaManager#allocate(long)}
     */
    public long byteSize() {
        return segment.byteSize();
    }

    /**
     * Releases the registration on every transport and waits (up to a minute) until it is done;
     * the memory is freed when the last in-flight remote access finishes. Idempotent.
     *
     * @throws RdmaReleaseException if a transport failed to deregister (the buffer is released anyway)
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            awaitRelease(remote.id(), CLOSE_TIMEOUT);
        }
    }

    /** Releases and waits; a full ring does not lose the release, which waits for room ({@code rdma.registration.queueTimeout}). */
    private void awaitRelease(long bufferId, Duration timeout) {
        try {
            manager.release(bufferId).get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw Errors.toPublic(null, e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmaException("interrupted while releasing buffer " + bufferId, e);
        } catch (TimeoutException e) {
            throw new RdmaTimeoutException(null, "releasing buffer " + bufferId + " took longer than " + timeout, e);
        }
    }

    @Override
    public String toString() {
        return "RdmaBuffer[" + remote + (closed.get() ? ", closed" : "") + "]";
    }
}
