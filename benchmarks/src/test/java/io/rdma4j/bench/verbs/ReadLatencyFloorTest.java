package io.rdma4j.bench.verbs;

import io.rdma4j.transport.ibverbs.ffi.IbverbsException;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReadLatencyFloorTest {

    /**
     * On a machine without RDMA devices libibverbs cannot list any (errno 38 here); with devices,
     * none has this name. Either way the run stops at opening the first device, with the verbs
     * function that failed and its reason.
     */
    @Test
    void run_failsWithTheVerbsError_whenTheLocalDeviceCannotBeOpened() {
        IbverbsException e = assertThrows(IbverbsException.class,
                () -> ReadLatencyFloor.run("rdma4j-no-such-device", "rdma4j-no-such-device", 0, 1));

        assertTrue(Set.of("ibv_get_device_list", "ibv_open_device").contains(e.function()), e.getMessage());
        assertTrue(e.function().equals("ibv_get_device_list") || e.getMessage().contains("no RDMA device named rdma4j-no-such-device"),
                e.getMessage());
    }
}
