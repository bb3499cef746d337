package io.rdma4j.transport.ibverbs.liveness;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** When a peer that leaves liveness probes unanswered counts as gone: silent for the limit, counted from its first unanswered probe. */
class PeerSilenceTest {

    private static final Duration LIMIT = Duration.ofSeconds(10);
    private static final long SECOND = 1_000_000_000L;

    @Test
    void peerSilentForLessThanTheLimit_isNotGone() {
        PeerSilence<String> silence = new PeerSilence<>(LIMIT);

        assertAll(
                () -> assertNull(silence.unanswered("a", 100 * SECOND)),
                () -> assertNull(silence.unanswered("a", 109 * SECOND)));
    }

    @Test
    void peerSilentForTheLimit_isGone_andTheReasonSaysHowLong() {
        PeerSilence<String> silence = new PeerSilence<>(LIMIT);
        silence.unanswered("a", 100 * SECOND);

        String why = silence.unanswered("a", 110 * SECOND);

        assertNotNull(why);
        assertTrue(why.contains("10000 ms") && why.contains("rdma.ibverbs.peerSilenceLimit"), why);
    }

    @Test
    void anAnswer_endsTheSilence_soItCountsAgainFromTheNextUnansweredProbe() {
        PeerSilence<String> silence = new PeerSilence<>(LIMIT);
        silence.unanswered("a", 100 * SECOND);
        silence.answered("a");

        assertAll(
                () -> assertNull(silence.unanswered("a", 111 * SECOND)),
                () -> assertNotNull(silence.unanswered("a", 121 * SECOND)));
    }

    @Test
    void peerNotAskedInARound_isForgotten() {
        PeerSilence<String> silence = new PeerSilence<>(LIMIT);
        silence.unanswered("a", 100 * SECOND);
        silence.unanswered("b", 100 * SECOND);

        silence.retainOnly(List.of("b"));

        assertAll(
                () -> assertEquals(1, silence.silentPeers()),
                () -> assertNull(silence.unanswered("a", 115 * SECOND)),
                () -> assertNotNull(silence.unanswered("b", 115 * SECOND)));
    }

    @Test
    void zeroLimit_silenceNeverCounts() {
        PeerSilence<String> silence = new PeerSilence<>(Duration.ZERO);
        silence.unanswered("a", 0);

        assertAll(
                () -> assertNull(silence.unanswered("a", 1_000_000 * SECOND)),
                () -> assertEquals(0, silence.silentPeers()));
    }

    @Test
    void silenceAcrossTheClocksWrap_isMeasuredByDifference() {
        PeerSilence<String> silence = new PeerSilence<>(LIMIT);
        silence.unanswered("a", Long.MAX_VALUE - SECOND);

        assertNotNull(silence.unanswered("a", Long.MIN_VALUE + 9 * SECOND));
    }
}
