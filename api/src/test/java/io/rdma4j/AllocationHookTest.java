package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code allocate()} asks the transports for memory; registration may be "not applicable". */
class AllocationHookTest {

    @RegisterExtension
    final Managers managers = new Managers();

    @Test
    void allocate_aTransportOffersMemory_theBufferIsThatMemory() {
        StubProvider shm = new StubProvider("shm", 300);
        shm.offersMemory = true;
        RdmaManager m = managers.start(shm, new StubProvider("tcp", 100));

        RdmaBuffer b = m.allocate(10_000).join();

        assertEquals(List.of(b.segment().address()), shm.allocated);
        assertEquals(10_000, b.byteSize());
    }

    @Test
    void allocate_asksInPriorityOrder_andTheFirstOfferWins() {
        StubProvider fast = new StubProvider("fast", 300);
        StubProvider slow = new StubProvider("slow", 100);
        fast.offersMemory = true;
        slow.offersMemory = true;
        RdmaManager m = managers.start(slow, fast);

        RdmaBuffer b = m.allocate(64).join();

        assertEquals(List.of(b.segment().address()), fast.allocated);
        assertTrue(slow.allocated.isEmpty());
    }

    @Test
    void allocate_noTransportOffers_plainPageAlignedMemory() {
        StubProvider tcp = new StubProvider("tcp", 100);
        RdmaManager m = managers.start(tcp);

        MemorySegment s = m.allocate(64).join().segment();

        assertTrue(tcp.allocated.isEmpty());
        assertEquals(0, s.address() % 4096);
    }

    @Test
    void allocatedMemory_isFreedWhenTheBufferCloses() {
        StubProvider shm = new StubProvider("shm", 300);
        shm.offersMemory = true;
        RdmaBuffer b = managers.start(shm).allocate(64).join();

        b.close();

        assertFalse(b.segment().scope().isAlive());
    }

    @Test
    void register_aTransportNotApplicable_tokenOmitsIt_andReleaseSkipsIt() {
        StubProvider shm = new StubProvider("shm", 300);
        shm.notApplicableTo = s -> "not memory shm allocated";
        StubProvider tcp = new StubProvider("tcp", 100);
        RdmaManager m = managers.start(shm, tcp);

        RdmaRemoteBuffer t = m.register(managers.arena().allocate(64)).join();
        m.release(t.id()).join();

        assertEquals(List.of("tcp"), List.copyOf(t.transports()));
        assertTrue(shm.idsOf("release").isEmpty());
        assertEquals(List.of(t.id()), tcp.idsOf("release"));
    }

    @Test
    void register_everyTransportNotApplicable_failsNamingEachReason() {
        StubProvider a = new StubProvider("a", 2);
        StubProvider b = new StubProvider("b", 1);
        a.notApplicableTo = s -> "a wants its own memory";
        b.notApplicableTo = s -> "b cannot map it";
        RdmaManager m = managers.start(a, b);

        CompletionException e = assertThrows(CompletionException.class,
                () -> m.register(managers.arena().allocate(64)).join());

        RegistrationException r = assertInstanceOf(RegistrationException.class, e.getCause());
        assertTrue(r.getMessage().contains("a: a wants its own memory") && r.getMessage().contains("b: b cannot map it"),
                r.getMessage());
        assertEquals(0, m.registeredBufferCount());
    }
}
