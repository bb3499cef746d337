package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The owner side's books: which queue pairs a new handshake takes out of service, which holders
 * a liveness round asks, and which queue pairs a holder found gone takes with it.
 */
class AcceptedQueuePairsTest {

    private static final Endpoint HOLDER = new Endpoint("10.0.0.1", 7000);
    private static final Endpoint OTHER_HOLDER = new Endpoint("10.0.0.2", 7000);
    private static final String FIRST = "01";
    private static final String SECOND = "02";
    private static final String OWNER = "aa";

    private static final long SECOND_NANOS = 1_000_000_000L;

    /** The books' clock, moved by hand. */
    private long now = 1_000 * SECOND_NANOS;
    private final AcceptedQueuePairs<String> books = new AcceptedQueuePairs<>(() -> now);

    private static AcceptedQueuePairs.Key key(String incarnation, int slot) {
        return new AcceptedQueuePairs.Key(incarnation, "rxe0", OWNER, "rxe1", slot);
    }

    @Test
    void newHandshakeForTheSameSlot_retiresTheQueuePairItReplaces() {
        books.put(HOLDER, key(FIRST, 0), "qp-a");
        books.put(HOLDER, key(FIRST, 1), "qp-b");

        List<String> retired = books.put(HOLDER, key(FIRST, 0), "qp-c");

        assertAll(
                () -> assertEquals(List.of("qp-a"), retired),
                () -> assertEquals(2, books.size(), "one queue pair per slot"));
    }

    @Test
    void slotsDifferingInAnyPartOfTheKey_liveSideBySide() {
        List<List<String>> retired = List.of(
                books.put(HOLDER, key(FIRST, 0), "a"),
                books.put(HOLDER, key(FIRST, 1), "slot 1"),
                books.put(HOLDER, new AcceptedQueuePairs.Key(FIRST, "rxe1", OWNER, "rxe1", 0), "holder device rxe1"),
                books.put(HOLDER, new AcceptedQueuePairs.Key(FIRST, "rxe0", "bb", "rxe1", 0), "a stale token's owner incarnation"),
                books.put(HOLDER, new AcceptedQueuePairs.Key(FIRST, "rxe0", OWNER, "rxe0", 0), "owner device rxe0"),
                books.put(OTHER_HOLDER, key(SECOND, 0), "another holder"));

        assertAll(
                () -> assertEquals(List.of(List.of(), List.of(), List.of(), List.of(), List.of(), List.of()), retired),
                () -> assertEquals(6, books.size()));
    }

    @Test
    void newIncarnationOnAnEndpoint_retiresEveryQueuePairOfThePreviousOne_andNoOtherEndpoints() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.put(HOLDER, key(FIRST, 1), "first-1");
        books.put(OTHER_HOLDER, key("03", 0), "other-0");

        List<String> retired = books.put(HOLDER, key(SECOND, 0), "second-0");

        assertAll(
                () -> assertEquals(List.of("first-0", "first-1"), retired.stream().sorted().toList()),
                () -> assertEquals(2, books.size(), "the successor's and the other endpoint's"));
    }

    @Test
    void handshakeFromASucceededIncarnation_isRefusedAndRecordsNothing() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.put(HOLDER, key(SECOND, 0), "second-0");

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> books.put(HOLDER, key(FIRST, 1), "late"));

        assertAll(
                () -> assertTrue(e.getMessage().contains("incarnation 01 at " + HOLDER + " was succeeded on that endpoint by 02"),
                        e.getMessage()),
                () -> assertEquals(1, books.size()),
                () -> assertEquals(List.of("second-0"), books.clear()));
    }

    @Test
    void clear_returnsEveryQueuePairInService_once() {
        books.put(HOLDER, key(FIRST, 0), "a");
        books.put(OTHER_HOLDER, key(SECOND, 0), "b");

        List<String> first = books.clear();

        assertAll(
                () -> assertEquals(List.of("a", "b"), first.stream().sorted().toList()),
                () -> assertEquals(List.of(), books.clear()),
                () -> assertEquals(0, books.size()));
    }

    @Test
    void quietHolders_namesEachEndpointWhoseLastHandshakeIsAtLeastThatOld_onceWithItsIncarnation() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.put(HOLDER, key(FIRST, 1), "first-1");
        now += 30 * SECOND_NANOS;
        books.put(OTHER_HOLDER, key("03", 0), "other-0");
        now += 10 * SECOND_NANOS;

        List<AcceptedQueuePairs.Holder> quiet = books.quietHolders(30 * SECOND_NANOS);

        assertAll(
                () -> assertEquals(1, quiet.size(), "one per endpoint; the other one handshook 10 s ago: " + quiet),
                () -> assertEquals(HOLDER, quiet.getFirst().endpoint()),
                () -> assertEquals(FIRST, quiet.getFirst().incarnation()),
                () -> assertEquals(2, books.quietHolders(10 * SECOND_NANOS).size(), "both, for a shorter quiet time"));
    }

    @Test
    void quietHolders_aHandshakeOnAnySlot_makesTheHolderRecentAgain() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        now += 30 * SECOND_NANOS;
        books.put(HOLDER, key(FIRST, 1), "first-1");

        assertEquals(List.of(), books.quietHolders(30 * SECOND_NANOS));
    }

    @Test
    void retireGone_returnsExactlyThatHoldersQueuePairs_once() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.put(HOLDER, key(FIRST, 1), "first-1");
        books.put(OTHER_HOLDER, key("03", 0), "other-0");
        books.confirmReachable(holderAt(HOLDER));
        AcceptedQueuePairs.Holder gone = holderAt(HOLDER);

        List<String> retired = books.retireGone(gone);

        assertAll(
                () -> assertEquals(List.of("first-0", "first-1"), retired.stream().sorted().toList()),
                () -> assertEquals(List.of(), books.retireGone(gone), "already retired"),
                () -> assertEquals(1, books.size()),
                () -> assertEquals(List.of(OTHER_HOLDER), books.quietHolders(0).stream().map(AcceptedQueuePairs.Holder::endpoint)
                        .toList(), "the gone holder is not asked again"));
    }

    @Test
    void retireGone_afterASuccessorHandshookFromTheEndpoint_retiresNothingOfTheSuccessors() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.confirmReachable(holderAt(HOLDER));
        AcceptedQueuePairs.Holder probed = holderAt(HOLDER);      // the probe goes to incarnation 01 ...
        List<String> byTheSuccessor = books.put(HOLDER, key(SECOND, 0), "second-0");     // ... 02 handshakes meanwhile

        List<String> retired = books.retireGone(probed);          // the answer (02, or unreachable) comes after

        assertAll(
                () -> assertEquals(List.of("first-0"), byTheSuccessor, "the successor's handshake retired its predecessor"),
                () -> assertEquals(List.of(), retired, "the stale answer retires nothing"),
                () -> assertEquals(1, books.size()),
                () -> assertEquals(SECOND, holderAt(HOLDER).incarnation()));
    }

    @Test
    void retireGone_afterTheSameIncarnationHandshookAgain_retiresNothing() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.confirmReachable(holderAt(HOLDER));
        AcceptedQueuePairs.Holder probed = holderAt(HOLDER);
        books.put(HOLDER, key(FIRST, 1), "first-1");               // it is there: it handshook after the probe was sent

        assertAll(
                () -> assertEquals(List.of(), books.retireGone(probed)),
                () -> assertEquals(2, books.size()));
    }

    @Test
    void holderRetiredAsGone_isServedWhenItHandshakesAgain() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.confirmReachable(holderAt(HOLDER));
        assertEquals(List.of("first-0"), books.retireGone(holderAt(HOLDER)));

        List<String> retired = books.put(HOLDER, key(FIRST, 0), "first-0-again");

        assertAll(
                () -> assertEquals(List.of(), retired),
                () -> assertEquals(1, books.size()),
                () -> assertEquals(FIRST, holderAt(HOLDER).incarnation()));
    }

    @Test
    void retireGone_ofAHolderThatNeverAnsweredAtItsEndpoint_retiresNothing() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        AcceptedQueuePairs.Holder unconfirmed = holderAt(HOLDER);

        assertAll(
                () -> assertEquals(List.of(), books.retireGone(unconfirmed), "its endpoint may just not reach it from here"),
                () -> assertEquals(1, books.size()),
                () -> assertEquals(0, books.reachableHolders()));
    }

    @Test
    void confirmedReachable_lastsThroughTheIncarnationsLaterHandshakes_butNotToItsSuccessor() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        books.confirmReachable(holderAt(HOLDER));
        books.put(HOLDER, key(FIRST, 1), "first-1");
        boolean afterItsOwnHandshake = holderAt(HOLDER).reachable();

        books.put(HOLDER, key(SECOND, 0), "second-0");

        assertAll(
                () -> assertTrue(afterItsOwnHandshake),
                () -> assertFalse(holderAt(HOLDER).reachable(), "the successor has not answered yet"),
                () -> assertEquals(0, books.reachableHolders()));
    }

    @Test
    void confirmReachable_ofAnIncarnationNoLongerThere_confirmsNothing() {
        books.put(HOLDER, key(FIRST, 0), "first-0");
        AcceptedQueuePairs.Holder first = holderAt(HOLDER);
        books.put(HOLDER, key(SECOND, 0), "second-0");

        books.confirmReachable(first);             // the predecessor's answer, late

        assertFalse(holderAt(HOLDER).reachable());
    }

    @Test
    void clear_forgetsTheHolders() {
        books.put(HOLDER, key(FIRST, 0), "a");

        books.clear();

        assertEquals(List.of(), books.quietHolders(0));
    }

    private AcceptedQueuePairs.Holder holderAt(Endpoint endpoint) {
        return books.quietHolders(0).stream().filter(h -> h.endpoint().equals(endpoint)).findFirst().orElseThrow();
    }
}
