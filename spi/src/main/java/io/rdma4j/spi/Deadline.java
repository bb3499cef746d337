package io.rdma4j.spi;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A point in time, on a monotonic {@link NanoClock} ({@link NanoClock#SYSTEM} unless a test
 * injects another), by which an operation must finish. Immutable; pass the same deadline down
 * every layer of one operation.
 */
public final class Deadline {

    private final NanoClock clock;
    private final long deadlineNanos;

    private Deadline(NanoClock clock, long deadlineNanos) {
        this.clock = clock;
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * A deadline {@code timeout} from now.
     *
     * @param timeout how long from now; a timeout too long for a {@code long} of nanoseconds is
     *                capped at about 146 years
     * @return the new deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Deadline after(Duration timeout) {
        return after(timeout, NanoClock.SYSTEM);
    }

    /**
     * A deadline {@code timeout} from now on {@code clock}.
     *
     * @param timeout how long from now; capped at about 146 years
     * @param clock   the clock the deadline runs on
     * @return the new deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Deadline after(Duration timeout, NanoClock clock) {
        return after(timeout, clock, clock.nanoTime());
    }

    /**
     * A deadline {@code timeout} after {@code nowNanos}, a reading of {@code clock} the caller
     * has just taken: one reading then both times an operation and starts its deadline.
     *
     * @param timeout  how long from {@code nowNanos}; capped at about 146 years
     * @param clock    the clock the deadline runs on
     * @param nowNanos {@code clock.nanoTime()}, read just before
     * @return the new deadline
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public static Deadline after(Duration timeout, NanoClock clock, long nowNanos) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException tooLong) {
            nanos = Long.MAX_VALUE / 2;
        }
        return new Deadline(clock, nowNanos + Math.min(nanos, Long.MAX_VALUE / 2));
    }

    /**
     * Nanoseconds left, never negative.
     *
     * @return the nanoseconds until the deadline, or 0 once it passed
     */
    public long remainingNanos() {
        return Math.max(0L, deadlineNanos - clock.nanoTime());
    }

    /**
     * Milliseconds left, rounded up, so that a positive remainder never reads as zero.
     *
     * @return the milliseconds until the deadline, or 0 once it passed
     */
    public long remainingMillis() {
        long nanos = remainingNanos();
        return nanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(nanos + 999_999L);
    }

    /**
     * Time left as a duration, never negative.
     *
     * @return the time until the deadline, or {@link Duration#ZERO} once it passed
     */
    public Duration remaining() {
        return Duration.ofNanos(remainingNanos());
    }

    /**
     * Whether no time is left.
     *
     * @return {@code true} once the deadline is reached
     */
    public boolean isExpired() {
        return deadlineNanos - clock.nanoTime() <= 0;
    }

    /**
     * The earlier of this deadline and {@code other}.
     *
     * @param other another deadline
     * @return whichever comes first; {@code this} when both are equal
     */
    public Deadline min(Deadline other) {
        if (other.clock != clock) {
            return remainingNanos() <= other.remainingNanos() ? this : other;
        }
        return deadlineNanos - other.deadlineNanos <= 0 ? this : other;
    }

    @Override
    public String toString() {
        return "Deadline[" + remaining() + " left]";
    }
}
