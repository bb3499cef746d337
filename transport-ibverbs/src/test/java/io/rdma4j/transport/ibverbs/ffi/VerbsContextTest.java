package io.rdma4j.transport.ibverbs.ffi;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Opening devices on whatever host runs the build (devices or none); the VM suite covers real devices. */
class VerbsContextTest {

    @Test
    void open_unknownDevice_failsNamingItAndTheDevicesThatExist() {
        IbverbsException e = assertThrows(IbverbsException.class, () -> VerbsContext.open("no-such-device0"));

        assertTrue(e.getMessage().startsWith("no RDMA device named no-such-device0; devices: [")
                || e.getMessage().startsWith("ibv_get_device_list failed: errno ")
                || e.getMessage().startsWith("ibverbs unavailable: "), e.getMessage());
    }

    @Test
    void deviceNames_agreeWithTheProbe() {
        LibIbverbs.Probe probe = LibIbverbs.probe();

        if (probe instanceof LibIbverbs.Probe.Devices(List<String> names)) {
            assertEquals(names, VerbsContext.deviceNames());
        } else {
            try {
                assertEquals(List.of(), VerbsContext.deviceNames());
            } catch (IbverbsException e) {
                assertTrue(e.getMessage().startsWith("ibv_get_device_list failed: errno ")
                        || e.getMessage().startsWith("ibverbs unavailable: "), e.getMessage());
            }
        }
    }
}
