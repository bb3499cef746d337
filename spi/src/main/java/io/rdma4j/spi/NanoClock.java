package io.rdma4j.spi;

/**
 * A monotonic clock in nanoseconds: {@link #SYSTEM} in production, a hand-moved one in tests, so
 * that deadlines and watchdogs can be tested without sleeping.
 */
@FunctionalInterface
public interface NanoClock {

    /** {@link System#nanoTime()}. */
    NanoClock SYSTEM = System::nanoTime;

    /**
     * The current time; only differences between two readings mean anything.
     *
     * @return nanoseconds since an arbitrary origin
     */
    long nanoTime();
}
