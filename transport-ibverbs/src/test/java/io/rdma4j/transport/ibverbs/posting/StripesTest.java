package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.VerbsTuning;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How ops are cut into stripes across queue pairs. */
class StripesTest {

    private static final long KIB = 1024;
    private static final long MIB = 1024 * KIB;

    @ParameterizedTest(name = "{0} bytes over {1} lanes, min {2}: {3} stripes")
    @CsvSource({
            "8, 4, 524288, 1",
            "1048575, 4, 524288, 1",          // under two minimum stripes: whole
            "1048576, 4, 524288, 2",
            "1572863, 4, 524288, 2",
            "67108864, 4, 524288, 4",         // 64 MiB: one per queue pair
            "67108864, 1, 524288, 1",
            "67108864, 64, 4194304, 16",      // no stripe under the minimum
    })
    void count_isOnePerLane_butNoStripeUnderTheMinimum(long length, int lanes, long min, int expected) {
        assertEquals(expected, Stripes.count(length, lanes, min));
    }

    @ParameterizedTest(name = "{0} bytes over {1} lanes, min {2}")
    @CsvSource({
            "67108864, 4, 524288",
            "67108865, 4, 524288",
            "1048577, 4, 524288",
            "10000001, 3, 65536",
            "1572863, 4, 524288",
            "99999, 8, 1024",
    })
    void stripes_coverTheOpExactly_alignedAndNoneUnderTheMinimum(long length, int lanes, long min) {
        int n = Stripes.count(length, lanes, min);
        long at = 0;
        for (int i = 0; i < n; i++) {
            long start = Stripes.start(length, n, i);
            long end = Stripes.end(length, n, i);
            long size = end - start;
            int stripe = i;
            assertAll(
                    () -> assertEquals(0, start % VerbsTuning.STRIPE_ALIGNMENT, "stripe " + stripe + " starts aligned"),
                    () -> assertTrue(n == 1 || size >= min, "stripe " + stripe + " of " + size + " bytes"));
            assertEquals(at, start, "stripes are contiguous");
            at = end;
        }
        assertEquals(length, at, "the stripes end where the op ends");
    }

    @ParameterizedTest(name = "{0} bytes in {1} stripes: the last is the largest")
    @CsvSource({"67108865, 4", "1048577, 2", "10000001, 3"})
    void lastStripe_takesTheRemainder(long length, int n) {
        long first = Stripes.end(length, n, 0) - Stripes.start(length, n, 0);
        long last = Stripes.end(length, n, n - 1) - Stripes.start(length, n, n - 1);

        assertTrue(last >= first && last - first < VerbsTuning.STRIPE_ALIGNMENT * (long) n, first + " then " + last);
    }
}
