package io.rdma4j.transport.ibverbs.liveness;

import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.spi.TransportException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a liveness probe's outcome proves: only an unreachable endpoint or another incarnation there means gone. */
class OwnerSweepTest {

    private static final String BELIEVED = "00112233445566778899aabbccddeeff";
    private static final String SUCCESSOR = "ffeeddccbbaa99887766554433221100";

    @Test
    void unreachableEndpoint_provesTheHolderGone_sayingWhy() {
        TransportException refused = new TransportException(TransportException.Kind.PEER_UNREACHABLE,
                "ibverbs control request: nothing listens at 10.0.0.1:7000 (Connection refused)");

        String why = OwnerSweep.goneBecause(BELIEVED, null, new CompletionException(refused));

        assertNotNull(why);
        assertTrue(why.contains("Connection refused"), why);
    }

    @Test
    void anotherIncarnationAnswering_provesTheHolderGone() {
        String why = OwnerSweep.goneBecause(BELIEVED, new VerbsWire.Probe(SUCCESSOR).encode(), null);

        assertNotNull(why);
        assertTrue(why.contains("incarnation " + SUCCESSOR + " answers"), why);
    }

    @Test
    void theBelievedIncarnationAnswering_provesNothing_andNamesIt() {
        byte[] reply = new VerbsWire.Probe(BELIEVED).encode();
        assertAll(
                () -> assertNull(OwnerSweep.goneBecause(BELIEVED, reply, null)),
                () -> assertEquals(BELIEVED, OwnerSweep.answeredBy(reply)));
    }

    @ParameterizedTest
    @EnumSource(value = TransportException.Kind.class, names = "PEER_UNREACHABLE", mode = EnumSource.Mode.EXCLUDE)
    void anyOtherFailure_timeoutIncluded_provesNothing(TransportException.Kind kind) {
        assertNull(OwnerSweep.goneBecause(BELIEVED, null, new TransportException(kind, "no answer")));
    }

    @Test
    void garbledAnswerOrAnUnexpectedException_provesNothing() {
        byte[] garbled = {VerbsWire.VERSION, VerbsWire.PROBE, 16, 1, 2};
        assertAll(
                () -> assertNull(OwnerSweep.goneBecause(BELIEVED, garbled, null)),
                () -> assertNull(OwnerSweep.answeredBy(garbled)),
                () -> assertNull(OwnerSweep.goneBecause(BELIEVED, new byte[0], null)),
                () -> assertNull(OwnerSweep.goneBecause(BELIEVED, null, new IllegalStateException("control client closed"))));
    }
}
