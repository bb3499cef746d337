package io.rdma4j.transport.ibverbs.device;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How long a device's empty completion queue is polled, by its poller and by a thread waiting for its ops, before they sleep. */
class PollWindowTest {

    private static final long US = TimeUnit.MICROSECONDS.toNanos(1);
    private static final long BUSY_POLL = 50 * US;

    private static PollWindow after(long busyPoll, long opNanos, int ops) {
        PollWindow w = new PollWindow(busyPoll);
        for (int i = 0; i < ops; i++) {
            w.observe(opNanos);
        }
        return w;
    }

    @Test
    void window_isTheBusyPollWindow_beforeAnyOpCompleted() {
        assertEquals(BUSY_POLL, new PollWindow(BUSY_POLL).nanos());
    }

    @Test
    void window_isTheBusyPollWindow_whenOpsTypicallyCompleteWithinHalfOfIt() {
        assertEquals(BUSY_POLL, after(BUSY_POLL, 3 * US, 100).nanos());
    }

    @Test
    void window_isTwiceTheTypicalOpTime_whenOpsTakeLongerThanHalfTheBusyPollWindow() {
        assertEquals(2 * 300 * US, after(BUSY_POLL, 300 * US, 1).nanos());
    }

    @Test
    void window_neverExceedsTheCap_forOpsJustUnderIt() {
        assertEquals(PollWindow.CAP_NANOS, after(BUSY_POLL, 900 * US, 1).nanos());
    }

    @Test
    void window_staysTheBusyPollWindow_whenOpsTypicallyTakeLongerThanTheCap() {
        assertEquals(BUSY_POLL, after(BUSY_POLL, 500 * TimeUnit.MILLISECONDS.toNanos(1), 50).nanos());
    }

    @Test
    void window_isZero_whenBusyPollingIsOff_howeverLongOpsTake() {
        assertEquals(0, after(0, 300 * US, 10).nanos());
    }

    @Test
    void window_isNeverShorterThanTheBusyPollWindow() {
        assertEquals(TimeUnit.SECONDS.toNanos(1), after(TimeUnit.SECONDS.toNanos(1), 300 * US, 10).nanos());
    }

    @Test
    void oneSlowOp_movesTheTypicalTimeByAnEighthOfTwiceTheCapAtMost() {
        PollWindow w = after(BUSY_POLL, 100 * US, 1);
        w.observe(TimeUnit.SECONDS.toNanos(30));       // e.g. the first op to a peer, which waited for the handshake
        assertEquals(100 * US + (2 * PollWindow.CAP_NANOS - 100 * US) / 8, w.typicalNanos());
        assertTrue(w.nanos() <= PollWindow.CAP_NANOS, "the window stays capped");
    }

    @Test
    void typicalTime_followsOpsThatBecomeFaster() {
        PollWindow w = after(BUSY_POLL, 400 * US, 1);
        for (int i = 0; i < 100; i++) {
            w.observe(10 * US);
        }
        assertEquals(BUSY_POLL, w.nanos());
        assertTrue(w.typicalNanos() < 20 * US, "typical " + w.typicalNanos() + " ns");
    }

    @Test
    void negativeBusyPollWindow_isRefused() {
        assertThrows(IllegalArgumentException.class, () -> new PollWindow(-1));
    }

    private static PollWindow withGaps(long busyPoll, long opNanos, long gapNanos) {
        PollWindow w = after(busyPoll, opNanos, 20);
        for (int i = 0; i < 20; i++) {
            w.observeGap(gapNanos);
        }
        return w;
    }

    @Test
    void waiterWindow_isTheWindow_beforeAnyGapWasSeen() {
        assertEquals(BUSY_POLL, after(BUSY_POLL, 5 * TimeUnit.MILLISECONDS.toNanos(1), 20).waiterNanos());
    }

    @Test
    void waiterWindow_isTwiceTheTypicalGap_forAnActionLongerThanTheCapWhoseCompletionsComeCloser() {
        assertEquals(2 * 300 * US, withGaps(BUSY_POLL, 5 * TimeUnit.MILLISECONDS.toNanos(1), 300 * US).waiterNanos());
    }

    @Test
    void waiterWindow_neverExceedsTheCap_forGapsJustUnderIt() {
        assertEquals(PollWindow.CAP_NANOS, withGaps(BUSY_POLL, 5 * TimeUnit.MILLISECONDS.toNanos(1), 900 * US).waiterNanos());
    }

    @Test
    void waiterWindow_isTheWindow_whenCompletionsComeFurtherApartThanTheCap() {
        assertEquals(BUSY_POLL, withGaps(BUSY_POLL, 50 * TimeUnit.MILLISECONDS.toNanos(1), 20 * TimeUnit.MILLISECONDS.toNanos(1))
                .waiterNanos());
    }

    @Test
    void waiterWindow_isTheWindow_whenThatIsLongerThanTwiceTheGap() {
        assertEquals(2 * 300 * US, withGaps(BUSY_POLL, 300 * US, 10 * US).waiterNanos());
    }

    @Test
    void waiterWindow_isZero_whenBusyPollingIsOff() {
        assertEquals(0, withGaps(0, 5 * TimeUnit.MILLISECONDS.toNanos(1), 300 * US).waiterNanos());
    }

    @Test
    void typicalGap_risesHalfWayToALongerGap_andFallsAnEighthOfTheWayToAShorterOne() {
        PollWindow w = new PollWindow(BUSY_POLL);
        w.observeGap(100 * US);
        w.observeGap(300 * US);
        assertEquals(200 * US, w.gapNanos());
        w.observeGap(40 * US);
        assertEquals(180 * US, w.gapNanos());
    }
}
