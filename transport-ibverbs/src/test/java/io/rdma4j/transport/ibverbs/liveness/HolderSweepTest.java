package io.rdma4j.transport.ibverbs.liveness;

import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Which owners the holder's liveness sweep asks: those none of whose queue pairs an op asked for within the interval. */
class HolderSweepTest {

    private static final long INTERVAL = 1_000;
    private static final long NOW = 10_000;
    private static final HolderSweep.Owner A = new HolderSweep.Owner(new Endpoint("10.0.0.1", 7000), "aa");
    private static final HolderSweep.Owner B = new HolderSweep.Owner(new Endpoint("10.0.0.2", 7000), "bb");

    @Test
    void ownerWhoseGroupsAreAllQuietForAnInterval_isAsked_once() {
        List<HolderSweep.Owner> quiet = HolderSweep.quiet(
                List.of(Map.entry(A, NOW - INTERVAL), Map.entry(A, NOW - 5 * INTERVAL)), NOW, INTERVAL);

        assertEquals(List.of(A), quiet);
    }

    @Test
    void ownerWithOneGroupUsedWithinTheInterval_isNotAsked() {
        List<HolderSweep.Owner> quiet = HolderSweep.quiet(
                List.of(Map.entry(A, NOW - 5 * INTERVAL), Map.entry(A, NOW - INTERVAL + 1), Map.entry(B, NOW - 2 * INTERVAL)),
                NOW, INTERVAL);

        assertEquals(List.of(B), quiet);
    }

    @Test
    void noGroups_noOwnerAsked() {
        assertEquals(List.of(), HolderSweep.quiet(List.of(), NOW, INTERVAL));
    }

    @Test
    void lastUseAcrossTheClocksWrap_isMeasuredByDifference() {
        assertEquals(List.of(A), HolderSweep.quiet(List.of(Map.entry(A, Long.MAX_VALUE - 10)), Long.MIN_VALUE + INTERVAL, INTERVAL));
    }
}
