package io.rdma4j;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DiscoveryTest {

    @Test
    void build_withoutExplicitProviders_discoversThemThroughServiceLoader() {
        try (RdmaManager m = RdmaManager.newBuilder().isolated().build()) {
            assertEquals(List.of("stub-discovered"), m.transports());
        }
    }

    @Test
    void shared_isOneInstancePerProcess_andIsReplacedOnceClosed() {
        RdmaManager first = RdmaManager.shared();

        assertSame(first, RdmaManager.shared());
        first.close();
        RdmaManager second = RdmaManager.shared();

        assertNotSame(first, second);
        assertTrue(first.isClosed());
        assertFalse(second.isClosed());
        second.close();
    }
}
