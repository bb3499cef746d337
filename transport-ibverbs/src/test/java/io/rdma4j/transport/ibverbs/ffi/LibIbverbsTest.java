package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The probe against this host's real {@code libibverbs.so.1}, present or not. */
class LibIbverbsTest {

    @Test
    void probe_calledTwice_returnsTheCachedResult() {
        LibIbverbs.Probe first = LibIbverbs.probe();

        LibIbverbs.Probe second = LibIbverbs.probe();

        assertSame(first, second);
        assertTrue(LibIbverbs.loadAttempted);
    }

    @Test
    void probe_onThisHost_devicesOrDocumentedReason() {
        LibIbverbs.Probe probe = LibIbverbs.probe();

        switch (probe) {
            case LibIbverbs.Probe.Devices(List<String> names) -> {
                assertFalse(names.isEmpty());
                names.forEach(n -> assertFalse(n.isBlank(), "blank device name"));
            }
            case LibIbverbs.Probe.Unavailable(String reason) -> assertTrue(
                    reason.equals(LibIbverbs.LIBRARY_MISSING)
                            || reason.equals(LibIbverbs.NO_DEVICE)
                            || reason.startsWith(LibIbverbs.NO_DEVICE_PREFIX + "ibv_get_device_list failed: errno "),
                    reason);
        }
    }

    @Test
    void reasons_documentedTexts_exact() {
        assertTrue(LibIbverbs.LIBRARY_MISSING.equals("libibverbs.so.1 not found: install Debian package libibverbs1"));
        assertTrue(LibIbverbs.NO_DEVICE.equals(
                "libibverbs found but no RDMA device (ibv_get_device_list returned 0 devices)"));
    }

    @Test
    void devices_empty_rejected() {
        assertThrows(IllegalArgumentException.class, () -> new LibIbverbs.Probe.Devices(List.of()));
    }

    @Test
    void unavailable_blankReason_rejected() {
        assertThrows(IllegalArgumentException.class, () -> new LibIbverbs.Probe.Unavailable(" "));
    }
}
