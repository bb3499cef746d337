package io.rdma4j.ibverbs;

import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The passive side's books: which queue pairs a new handshake takes out of service. */
class PassiveQueuePairsTest {

    private static final Endpoint HOLDER = new Endpoint("10.0.0.1", 7000);
    private static final Endpoint OTHER_HOLDER = new Endpoint("10.0.0.2", 7000);
    private static final String FIRST = "01";
    private static final String SECOND = "02";
    private static final String OWNER = "aa";

    private final PassiveQueuePairs<String> books = new PassiveQueuePairs<>();

    private static PassiveQueuePairs.Key key(String incarnation, int slot) {
        return new PassiveQueuePairs.Key(incarnation, "rxe0", OWNER, "rxe1", slot);
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
                books.put(HOLDER, new PassiveQueuePairs.Key(FIRST, "rxe1", OWNER, "rxe1", 0), "holder device rxe1"),
                books.put(HOLDER, new PassiveQueuePairs.Key(FIRST, "rxe0", "bb", "rxe1", 0), "a stale token's owner incarnation"),
                books.put(HOLDER, new PassiveQueuePairs.Key(FIRST, "rxe0", OWNER, "rxe0", 0), "owner device rxe0"),
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
}
