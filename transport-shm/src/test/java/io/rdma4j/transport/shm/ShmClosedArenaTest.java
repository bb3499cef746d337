package io.rdma4j.transport.shm;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A registered segment whose arena its owner closed without releasing it is out of reach over shm,
 * as over TCP: ops are refused with the owner's word for it. Two managers of this JVM, shm only.
 *
 * <p>The owner's segments here are views, with their own arena, of memory that stays allocated
 * after that arena closed: the view's scope dies as a caller's arena would, while the bytes stay
 * where the test can check that no refused write changed them (and no holder can corrupt this
 * JVM's heap by writing freed memory).
 */
class ShmClosedArenaTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Duration REVOCATION_BOUND = Duration.ofSeconds(10);
    private static final String CLOSED = "the owner closed the arena of its memory without releasing it first";

    @RegisterExtension
    final Managers managers = new Managers();

    /** The holder manager: shm only, its paths chosen as by default (mapping or cross-memory attach here). */
    RdmaManager holder() {
        return managers.start(new ShmTransportProvider());
    }

    /** {@code size} bytes of pattern 1, in an arena of their own over memory the test keeps. */
    private MemorySegment ownersMemory(long size, Arena view) {
        MemorySegment kept = Patterns.fill(managers.arena().allocate(size, 4096), 1);
        return kept.reinterpret(view, null);
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {4096, 1 << 20})
    void readAfterTheArenaClosed_isRefusedAsClosed(long size) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        Arena arena = Arena.ofShared();
        RdmaRemoteBuffer token = owner.register(ownersMemory(size, arena)).join();
        MemorySegment local = managers.arena().allocate(size);
        holder.read(token, local, TIMEOUT).join();                     // attached

        arena.close();
        Throwable refused = firstRefusedRead(holder, token, local);

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, refused);
        assertTrue(e.getMessage().endsWith(CLOSED), e.getMessage());
    }

    @ParameterizedTest(name = "{0} bytes")
    @ValueSource(longs = {4096, 1 << 20})
    void writeAfterTheArenaClosed_isRefused_andTheMemoryKeepsItsBytes(long size) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        Arena arena = Arena.ofShared();
        MemorySegment segment = ownersMemory(size, arena);
        MemorySegment kept = MemorySegment.ofAddress(segment.address()).reinterpret(size);
        RdmaRemoteBuffer token = owner.register(segment).join();
        MemorySegment local = managers.arena().allocate(size);
        holder.read(token, local, TIMEOUT).join();
        arena.close();
        firstRefusedRead(holder, token, local);

        Throwable refused = failureOf(() -> holder.write(token, Patterns.fill(local, 2), TIMEOUT).join());

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, refused);
        assertTrue(e.getMessage().endsWith(CLOSED), e.getMessage());
        assertEquals(-1, Patterns.mismatch(kept, 1), "the closed memory was not written");
    }

    /**
     * A buffer registered over part of an {@code allocate()}d one (a memory file, which holders
     * map) whose allocation was then closed: the manager freed the memory file, so holders that
     * mapped it are refused too.
     */
    @Test
    void sliceOfAnAllocatedBuffer_afterTheBufferWasClosed_isRefusedAsClosed() {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        RdmaBuffer allocated = owner.allocate(8192).join();
        RdmaRemoteBuffer token = owner.register(allocated.segment().asSlice(4096, 4096)).join();
        MemorySegment local = managers.arena().allocate(4096);
        holder.read(token, local, TIMEOUT).join();                     // mapped

        allocated.close();
        Throwable refused = firstRefusedRead(holder, token, local);

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, refused);
        assertTrue(e.getMessage().endsWith(CLOSED), e.getMessage());
    }

    /**
     * An owner whose holders stopped copying stops looking at its watched arenas (it goes dormant,
     * and no longer wakes for them); a segment closed meanwhile is refused at the holder's very next
     * op, which wakes the owner and has it look first. Mutant killed: a holder copying without
     * waking the dormant owner ({@code AccessTable.enter} ignoring the flag): that read succeeds.
     */
    @Test
    void segmentClosedWhileTheOwnerIsDormant_isRefusedAtTheNextOp() {
        OpenedShm shm = new OpenedShm();
        RdmaManager owner = managers.start(shm);
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Arena arena = Arena.ofShared();
        RdmaRemoteBuffer token = owner.register(ownersMemory(4096, arena)).join();
        MemorySegment local = managers.arena().allocate(4096);
        holder.read(token, local, TIMEOUT).join();                     // granted: the owner looks while holders copy
        awaitDormant(shm.transport());

        arena.close();
        Throwable refused = failureOf(() -> holder.read(token, local, TIMEOUT).join());

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, refused);
        assertTrue(e.getMessage().endsWith(CLOSED), e.getMessage());
    }

    /** A dormant owner, woken by a holder about to copy, serves that copy and looks again while holders copy. */
    @Test
    void dormantOwner_wokenByAHoldersRead_servesItAndLooksAgain() {
        OpenedShm shm = new OpenedShm();
        RdmaManager owner = managers.start(shm);
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Arena arena = Arena.ofShared();
        RdmaRemoteBuffer token = owner.register(ownersMemory(4096, arena)).join();
        MemorySegment local = managers.arena().allocate(4096);
        holder.read(token, local, TIMEOUT).join();
        awaitDormant(shm.transport());

        holder.read(token, Patterns.fill(local, 9), TIMEOUT).join();

        assertEquals(-1, Patterns.mismatch(local, 1), "the read copied the owner's bytes");
        assertTrue(!shm.transport().isDormant(), "the owner looks again");
        arena.close();
    }

    /** Waits (bounded) until the owner stopped looking at its watched arenas: no copy began for a look. */
    private static void awaitDormant(ShmTransport owner) {
        long end = System.nanoTime() + REVOCATION_BOUND.toNanos();
        boolean dormant;
        while (!(dormant = owner.isDormant()) && System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
        assertTrue(dormant, "the owner went dormant within " + REVOCATION_BOUND + " of the last copy");
    }

    /**
     * Reads until one is refused: the owner notices a closed arena within a few milliseconds
     * ({@link ShmTransport}), not at the very instant, so reads just after the close may still
     * succeed. Fails when none is refused within {@link #REVOCATION_BOUND}.
     */
    private static Throwable firstRefusedRead(RdmaManager holder, RdmaRemoteBuffer token, MemorySegment local) {
        long end = System.nanoTime() + REVOCATION_BOUND.toNanos();
        while (System.nanoTime() - end < 0) {
            try {
                holder.read(token, local, TIMEOUT).join();
            } catch (CompletionException e) {
                return e.getCause().getCause();
            }
            Thread.onSpinWait();
        }
        return fail("reads still succeed " + REVOCATION_BOUND + " after the arena closed");
    }

    private static Throwable failureOf(Runnable op) {
        try {
            op.run();
        } catch (CompletionException e) {
            return e.getCause().getCause();
        }
        return fail("expected the op to fail, but it succeeded");
    }
}
