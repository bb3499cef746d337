package io.rdma4j.transport.shm;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.testing.ForgedTokens;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The access key guards every op, not only the first one of a buffer: a holder that read a buffer
 * with its real token cannot then reach it with a token that names the same buffer and another
 * key. Two managers of this JVM, shm only.
 */
class ShmAccessKeyTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String DENIED = "denied: no such buffer, released, or wrong access key";
    private static final int SIZE = 4096;

    @RegisterExtension
    final Managers managers = new Managers();

    /** The holder manager: shm only, its paths chosen as by default (mapping or cross-memory attach here). */
    RdmaManager holder() {
        return managers.start(new ShmTransportProvider());
    }

    /** The owner's buffer, filled with pattern 1: {@code allocate} (a memory file) or {@code register} (other memory). */
    private record Owned(RdmaRemoteBuffer token, MemorySegment segment) {
    }

    private Owned own(RdmaManager owner, String memory) {
        if (memory.equals("allocate")) {
            var buffer = owner.allocate(SIZE).join();
            return new Owned(buffer.remote(), Patterns.fill(buffer.segment(), 1));
        }
        MemorySegment segment = Patterns.fill(managers.arena().allocate(SIZE, 4096), 1);
        return new Owned(owner.register(segment).join(), segment);
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void wrongKeyRead_afterAGoodRead_isRefusedLikeAnUnknownBuffer(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        Owned owned = own(owner, memory);
        MemorySegment local = managers.arena().allocate(SIZE);
        RdmaResult good = holder.newAction().readInto(owned.token(), local).submitForResult(TIMEOUT).join();
        assertEquals(List.of("shm"), good.transports());
        MemorySegment stolen = managers.arena().allocate(SIZE);

        Throwable failure = failureOf(holder.read(ForgedTokens.withWrongKey(owned.token()), stolen, TIMEOUT));

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, failure.getCause());
        assertTrue(e.getMessage().endsWith("access to buffer " + owned.token().id() + " " + DENIED), e.getMessage());
        assertEquals(-1, stolen.mismatch(MemorySegment.ofArray(new byte[SIZE])), "nothing of the buffer reached the holder");
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void wrongKeyWrite_afterAGoodRead_isRefused_andTheBufferKeepsItsBytes(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        Owned owned = own(owner, memory);
        holder.read(owned.token(), managers.arena().allocate(SIZE), TIMEOUT).join();
        MemorySegment forged = Patterns.fill(managers.arena().allocate(SIZE), 2);

        Throwable failure = failureOf(holder.write(ForgedTokens.withWrongKey(owned.token()), forged, TIMEOUT));

        RemoteAccessException e = assertInstanceOf(RemoteAccessException.class, failure.getCause());
        assertTrue(e.getMessage().endsWith("access to buffer " + owned.token().id() + " " + DENIED), e.getMessage());
        assertEquals(-1, Patterns.mismatch(owned.segment(), 1), "the owner's bytes are unchanged");
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void goodToken_afterARefusedWrongKey_stillReads(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = holder();
        Owned owned = own(owner, memory);
        holder.read(owned.token(), managers.arena().allocate(SIZE), TIMEOUT).join();
        failureOf(holder.read(ForgedTokens.withWrongKey(owned.token()), managers.arena().allocate(SIZE), TIMEOUT));
        MemorySegment local = managers.arena().allocate(SIZE);

        holder.read(owned.token(), local, TIMEOUT).join();

        assertEquals(-1, Patterns.mismatch(local, 1));
    }

    static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (Exception e) {
            return fail("expected the op to fail, got " + e);
        }
        return fail("expected the op to fail, but it succeeded");
    }
}
