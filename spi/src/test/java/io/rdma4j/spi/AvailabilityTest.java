package io.rdma4j.spi;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class AvailabilityTest {

    @Test
    void requireAvailable_ofAnUnavailableProvider_throwsNamingTheTransportAndTheReason() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Availability.unavailable("libexample.so.1 not found").requireAvailable("example"));
        assertEquals("example is unavailable: libexample.so.1 not found", e.getMessage());
    }

    @Test
    void requireAvailable_ofAnAvailableProvider_returns() {
        assertDoesNotThrow(() -> Availability.available().requireAvailable("example"));
    }

    @Test
    void unavailable_withoutAReason_isRefused() {
        assertThrows(IllegalArgumentException.class, () -> Availability.unavailable(" "));
    }
}
