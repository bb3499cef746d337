package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.TransportException;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one error table: every {@link ErrorCode}, raised by an owner, crosses a real control
 * connection and arrives as the same code's kind, and then as the same public exception type.
 */
class ErrorTableTest {

    @RegisterExtension
    final Managers managers = new Managers();

    /** What an owner's handler throws for each code. */
    private static Exception raisedFor(ErrorCode code) {
        return switch (code) {
            case ACCESS_DENIED -> new BufferAccessException(BufferAccessException.Reason.DENIED, 1, "denied");
            case STALE_TOKEN -> new BufferAccessException(BufferAccessException.Reason.STALE, 1, "stale token");
            case OUT_OF_RANGE -> new BufferAccessException(BufferAccessException.Reason.OUT_OF_RANGE, 1, "outside");
            case OWNER_MEMORY_CLOSED -> new BufferAccessException(BufferAccessException.Reason.CLOSED, 1, "closed");
            case READ_ONLY -> BufferAccessException.readOnly(1);
            case BAD_REQUEST -> new IllegalArgumentException("bad request");
            case RELEASE_FAILED -> new RdmaReleaseException(Map.of("verbs", new IllegalStateException("dereg failed")));
            case FAILED -> new IllegalStateException("something else");
        };
    }

    /** The public type a caller finally sees for each code. */
    private static Class<? extends RuntimeException> publicTypeOf(ErrorCode code) {
        return switch (code) {
            case ACCESS_DENIED, OUT_OF_RANGE, OWNER_MEMORY_CLOSED, READ_ONLY -> RemoteAccessException.class;
            case STALE_TOKEN -> StaleTokenException.class;
            case RELEASE_FAILED -> RdmaReleaseException.class;
            case BAD_REQUEST, FAILED -> RdmaException.class;
        };
    }

    @ParameterizedTest
    @EnumSource(ErrorCode.class)
    void everyCode_roundTripsThroughARealSocket_toItsKindAndPublicType(ErrorCode code) {
        StubProvider mine = new StubProvider("verbs", 1);
        StubProvider theirs = new StubProvider("verbs", 1);
        managers.start(mine);
        RdmaManager peer = managers.start(theirs);
        Exception raised = raisedFor(code);
        theirs.context.control().onRequest((from, payload) -> {
            throw raised;
        });

        CompletionException e = assertThrows(CompletionException.class, () -> mine.context.control()
                .request(peer.controlEndpoint(), new byte[1], Deadline.after(Duration.ofSeconds(10))).join());

        TransportException te = assertInstanceOf(TransportException.class, e.getCause());
        assertEquals(code.kind(), te.kind(), te.getMessage());
        assertTrue(te.getMessage().contains(raised.getMessage()), te.getMessage());
        assertEquals(publicTypeOf(code), Errors.toPublic("verbs", te).getClass());
    }

    @Test
    void wireCodes_areStable_andAnUnknownCodeReadsAsFailed() {
        assertEquals(1, ErrorCode.ACCESS_DENIED.wire());
        assertEquals(2, ErrorCode.STALE_TOKEN.wire());
        assertEquals(3, ErrorCode.OUT_OF_RANGE.wire());
        assertEquals(4, ErrorCode.OWNER_MEMORY_CLOSED.wire());
        assertEquals(5, ErrorCode.BAD_REQUEST.wire());
        assertEquals(6, ErrorCode.RELEASE_FAILED.wire());
        assertEquals(7, ErrorCode.FAILED.wire());
        assertEquals(8, ErrorCode.READ_ONLY.wire());
        for (ErrorCode c : ErrorCode.values()) {
            assertEquals(c, ErrorCode.fromWire(c.wire()));
        }
        assertEquals(ErrorCode.FAILED, ErrorCode.fromWire(200));
    }

    @Test
    void remoteReleaseOfAStaleToken_isRefusedAsStale() {
        RdmaManager owner = managers.start(new StubProvider("verbs", 1));
        RdmaManager holder = managers.start(new StubProvider("verbs", 1));
        RdmaRemoteBuffer token = owner.allocate(64).join().remote();
        RdmaRemoteBuffer stale = io.rdma4j.testing.ForgedTokens.ofAnotherIncarnation(token);

        CompletionException e = assertThrows(CompletionException.class, () -> holder.release(stale).join());

        assertInstanceOf(StaleTokenException.class, e.getCause());
        assertEquals(1, owner.registeredBufferCount());
    }
}
