package io.rdma4j.spi;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeadlineTest {

    private final AtomicLong now = new AtomicLong(1_000);

    @Test
    void remaining_countsDownWithItsClock_andStopsAtZero() {
        Deadline d = Deadline.after(Duration.ofMillis(10), now::get);

        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(4));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(6), d.remainingNanos());
        assertEquals(6, d.remainingMillis());
        assertFalse(d.isExpired());

        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(7));
        assertEquals(0, d.remainingNanos());
        assertEquals(Duration.ZERO, d.remaining());
        assertTrue(d.isExpired());
    }

    @Test
    void after_aReadingTheCallerTook_countsFromThatReading_notFromTheClocksNow() {
        long reading = now.get();
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(3));

        Deadline d = Deadline.after(Duration.ofMillis(10), now::get, reading);

        assertEquals(TimeUnit.MILLISECONDS.toNanos(7), d.remainingNanos());
    }

    @Test
    void remainingMillis_roundsAPositiveRemainderUp() {
        Deadline d = Deadline.after(Duration.ofNanos(1), now::get);

        assertEquals(1, d.remainingMillis());
    }

    @Test
    void min_picksTheEarlierDeadline() {
        Deadline early = Deadline.after(Duration.ofSeconds(1), now::get);
        Deadline late = Deadline.after(Duration.ofSeconds(2), now::get);

        assertSame(early, early.min(late));
        assertSame(early, late.min(early));
    }

    @Test
    void after_negativeTimeout_isRefused() {
        assertThrows(IllegalArgumentException.class, () -> Deadline.after(Duration.ofMillis(-1), now::get));
    }

    @Test
    void after_aTimeoutTooLongForNanoseconds_isCappedInsteadOfOverflowing() {
        Deadline d = Deadline.after(Duration.ofDays(365L * 1_000_000), now::get);

        assertFalse(d.isExpired());
        assertTrue(d.remainingNanos() > TimeUnit.DAYS.toNanos(365L * 100));
    }
}
