package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Which transport a run uses and why, and how settings are shown. */
class TransportsTest {

    @Test
    void withoutARequest_theFastestOfThisSideThatThePeerAlsoRuns_isChosen() {
        Transports.Choice c = Transports.choose(List.of("ibverbs", "shm", "tcp"), Set.of("tcp", "shm"), null);
        assertEquals("shm", c.transport());
        assertTrue(c.reason().startsWith("the fastest transport both sides run") && c.reason().contains("[ibverbs, shm, tcp]"),
                c.reason());
    }

    @Test
    void aRequestedTransportThatBothRun_isChosen_andTheReasonSaysSo() {
        Transports.Choice c = Transports.choose(List.of("shm", "tcp"), Set.of("shm", "tcp"), "tcp");
        assertEquals("tcp", c.transport());
        assertTrue(c.reason().startsWith("requested with --transport"), c.reason());
    }

    @Test
    void aRequestedTransportThePeerDoesNotRun_fails_namingWhatEachSideRuns() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Transports.choose(List.of("ibverbs", "tcp"), List.of("tcp"), "ibverbs"));
        assertEquals("--transport ibverbs is not available on both sides: this side runs [ibverbs, tcp], the peer [tcp]",
                e.getMessage());
    }

    @Test
    void sidesWithNothingInCommon_fail_namingWhatEachSideRuns() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Transports.choose(List.of("shm"), List.of("tcp"), null));
        assertEquals("the two sides share no transport: this side runs [shm], the peer [tcp]", e.getMessage());
    }

    @Test
    void settingValues_areShownAsTheReadmeWritesThem() {
        assertEquals("(empty)", Transports.display(Optional.empty()));
        assertEquals("cpu:0", Transports.display(Optional.of("cpu:0")));
        assertEquals("(empty)", Transports.display(""));
        assertEquals("30s", Transports.display(Duration.ofSeconds(30)));
        assertEquals("500ms", Transports.display(Duration.ofMillis(500)));
        assertEquals("50us", Transports.display(Duration.ofNanos(50_000)));
        assertEquals("1500ns", Transports.display(Duration.ofNanos(1_500)));
        assertEquals("64", Transports.display(64));
    }
}
