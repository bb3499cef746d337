package io.rdma4j;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ManagerStartTest {

    private static RdmaManager build(StubProvider... providers) {
        return RdmaManager.newBuilder().isolated().providers(List.of(providers)).build();
    }

    @Test
    void build_ordersTransportsByPriority_fastestFirst() {
        try (RdmaManager m = build(new StubProvider("slow", 100), new StubProvider("fast", 200), new StubProvider("mid", 150))) {
            assertEquals(List.of("fast", "mid", "slow"), m.transports());
        }
    }

    @Test
    void build_providerFailingToOpen_isSkippedAndTheOthersRun() {
        StubProvider broken = new StubProvider("broken", 200);
        broken.openFailure = new IllegalStateException("device on fire");
        try (RdmaManager m = build(broken, new StubProvider("ok", 100))) {
            assertEquals(List.of("ok"), m.transports());
        }
    }

    @Test
    void build_unavailableProvider_isNotOpened() {
        StubProvider off = new StubProvider("off", 200);
        off.availability = Availability.unavailable("disabled by test");
        try (RdmaManager m = build(off, new StubProvider("on", 100))) {
            assertEquals(List.of("on"), m.transports());
            assertTrue(off.events.isEmpty());
        }
    }

    @Test
    void build_noProviderAvailable_failsWithOneErrorListingEachReason() {
        StubProvider a = new StubProvider("alpha", 200);
        a.availability = Availability.unavailable("no device");
        StubProvider b = new StubProvider("beta", 100);
        b.availability = Availability.unavailable("disabled by rdma.beta=false");

        TransportUnavailableException e = assertThrows(TransportUnavailableException.class, () -> build(a, b));

        assertTrue(e.getMessage().startsWith("no RDMA transport available"), e.getMessage());
        assertTrue(e.getMessage().contains("alpha: no device"), e.getMessage());
        assertTrue(e.getMessage().contains("beta: disabled by rdma.beta=false"), e.getMessage());
    }

    @Test
    void build_noProviderAtAll_failsSayingNoneWasFound() {
        TransportUnavailableException e = assertThrows(TransportUnavailableException.class, () -> build());

        assertTrue(e.getMessage().startsWith("no RDMA transport available"), e.getMessage());
        assertTrue(e.getMessage().contains("no transport provider found"), e.getMessage());
    }

    @Test
    void build_everyAvailableProviderFailsToOpen_failsWithEachErrorAndDifferentMessage() {
        StubProvider a = new StubProvider("alpha", 200);
        a.openFailure = new IllegalStateException("cannot open mlx5_0");
        StubProvider b = new StubProvider("beta", 100);
        b.openFailure = new IllegalStateException("port in use");

        TransportUnavailableException e = assertThrows(TransportUnavailableException.class, () -> build(a, b));

        assertTrue(e.getMessage().startsWith("all available RDMA transports failed to initialize: "), e.getMessage());
        assertTrue(e.getMessage().contains("alpha: cannot open mlx5_0; beta: port in use"), e.getMessage());
        assertEquals(2, e.getSuppressed().length);
    }

    @Test
    void build_invalidSettingOfAnUnavailableTransport_stillFailsNamingKeyAndValue() {
        StubProvider unused = new StubProvider("unused", 200);
        unused.availability = Availability.unavailable("no hardware");
        unused.declaredSettings = List.of(Setting.integer("rdma.unused.depth", "RDMA_UNUSED_DEPTH", 4, 1, 16, "test"));

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(unused, new StubProvider("ok", 100))).set("rdma.unused.depth", "99").build());

        assertTrue(e.getMessage().contains("rdma.unused.depth"), e.getMessage());
        assertTrue(e.getMessage().contains("RDMA_UNUSED_DEPTH"), e.getMessage());
        assertTrue(e.getMessage().contains("'99'"), e.getMessage());
    }

    @Test
    void build_unknownSettingKey_failsListingTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(new StubProvider("ok", 100))).set("rdma.tcp.paralelism", "4").build());

        assertTrue(e.getMessage().contains("unknown setting 'rdma.tcp.paralelism'"), e.getMessage());
        assertTrue(e.getMessage().contains("rdma.registrationRingSize"), e.getMessage());
    }

    @Test
    void build_ringSizeNotAPowerOfTwo_fails() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaManager.newBuilder().isolated()
                .providers(List.of(new StubProvider("ok", 100))).set(RdmaSettings.REGISTRATION_RING_SIZE, 1000).build());

        assertTrue(e.getMessage().contains("power of two"), e.getMessage());
    }

    @Test
    void build_settingsReachTheProvider_parsedAndValidated() {
        StubProvider p = new StubProvider("ok", 100);
        Setting<Integer> depth = Setting.integer("rdma.ok.depth", "", 4, 1, 16, "test");
        p.declaredSettings = List.of(depth);

        try (RdmaManager m = RdmaManager.newBuilder().isolated().providers(List.of(p)).set("rdma.ok.depth", " 7 ").build()) {
            assertEquals(7, p.settingsSeen.get(depth));
            assertEquals(7, m.setting(depth));
        }
    }

    @Test
    void build_twoProvidersWithTheSameName_rejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> build(new StubProvider("same", 1), new StubProvider("same", 2)));

        assertTrue(e.getMessage().contains("two transport providers are named same"), e.getMessage());
    }

    @Test
    void close_isIdempotent_andClosesEveryTransportOnce() {
        StubProvider p = new StubProvider("ok", 100);
        RdmaManager m = build(p);

        m.close();
        m.close();

        assertTrue(m.isClosed());
        assertEquals(1, p.events.stream().filter("close"::equals).count());
    }

    @Test
    void close_closesTransportsInReversePriorityOrder() {
        StubProvider fast = new StubProvider("fast", 200);
        StubProvider slow = new StubProvider("slow", 100);
        List<String> journal = new java.util.concurrent.CopyOnWriteArrayList<>();
        RdmaManager m = build(fast, slow);
        fast.journal = journal;
        slow.journal = journal;

        m.close();

        assertEquals(List.of("slow close", "fast close"), journal);
    }

    @Test
    void close_stopsTheRegistrationThread() throws InterruptedException {
        RdmaManager m = build(new StubProvider("ok", 100));
        m.register(java.lang.foreign.Arena.ofAuto().allocate(8)).join();
        Thread ring = m.registrationThread();
        assertTrue(ring.isAlive());

        m.close();
        ring.join(10_000);

        assertFalse(ring.isAlive());
    }
}
