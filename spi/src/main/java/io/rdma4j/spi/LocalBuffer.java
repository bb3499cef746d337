package io.rdma4j.spi;

import java.lang.foreign.MemorySegment;

/**
 * A registration of this manager, as a transport serving a remote request sees it.
 *
 * <p>Every access to {@link #segment()} must happen inside a {@link Pin}: while any pin is
 * open the manager does not free the memory of a buffer it owns, and a buffer released in the
 * meantime refuses new pins. Pins are cheap (an atomic counter) and must be closed promptly;
 * hold one per chunk, not per connection.
 */
public interface LocalBuffer {

    /**
     * The id the manager assigned.
     *
     * @return the buffer id, as in the token
     */
    long id();

    /**
     * Length in bytes.
     *
     * @return the length of {@link #segment()}
     */
    long byteSize();

    /**
     * The registered memory. Access it only while a pin is open.
     *
     * @return the memory; owned by the manager or by the caller that registered it, never by the
     *         transport, which must not close or free it
     */
    MemorySegment segment();

    /**
     * Whether the registration is read-only: registered from a read-only segment
     * ({@link MemorySegment#isReadOnly()}). A transport refuses every remote write into it with
     * {@link BufferAccessException#readOnly(long)} before touching a byte; reads are served as
     * usual. Fixed for the registration's lifetime.
     *
     * @return {@code true} when remote writes must be refused; the default asks {@link #segment()}
     */
    default boolean readOnly() {
        return segment().isReadOnly();
    }

    /**
     * Pins the buffer for one access.
     *
     * @throws BufferAccessException with {@link BufferAccessException.Reason#DENIED} if the
     *                               buffer was released, or {@link BufferAccessException.Reason#CLOSED}
     *                               if the caller-owned arena behind it was closed
     * @return the open pin; close it as soon as the access is done
     */
    Pin pin();

    /** An open access to a {@link LocalBuffer}; close it exactly once. */
    interface Pin extends AutoCloseable {
        @Override
        void close();
    }
}
