package io.rdma4j.transport.shm;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import io.rdma4j.RemoteAccessException;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Actions of many small ops on one buffer of another manager run as one copy (one grant check,
 * one access-table entry, on register()ed memory one vectored system call per piece of up to
 * 1024 ops): each op still moves exactly its own range, in the action's order. Two managers of
 * this JVM, shm only, on allocate()d (mapped) and register()ed (cross-memory) buffers.
 */
class ShmBatchTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** More ops than one vectored call takes (1024), of sizes 1 to 61 bytes. */
    private static final int OPS = 2500;

    @RegisterExtension
    final Managers managers = new Managers();

    private record Owned(RdmaRemoteBuffer token, MemorySegment segment) {
    }

    private Owned own(RdmaManager owner, String memory, long size, long seed) {
        if (memory.equals("allocate")) {
            var buffer = owner.allocate(size).join();
            return new Owned(buffer.remote(), Patterns.fill(buffer.segment(), seed));
        }
        MemorySegment segment = Patterns.fill(managers.arena().allocate(size, 4096), seed);
        return new Owned(owner.register(segment).join(), segment);
    }

    /** Op i's length: 1 to 61 bytes, so that ranges and iovec entries differ in size. */
    private static long length(int i) {
        return 1 + (i * 7L) % 61;
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchOfSmallReads_onSlicesOfOneBuffer_eachOpBringsItsOwnRange(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, OPS * 64L, 3);
        MemorySegment local = managers.arena().allocate(OPS * 64L);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < OPS; i++) {
            long from = ((i * 31L) % OPS) * 64;     // remote ranges out of order, local ones in order
            action.readInto(owned.token().slice(from, length(i)), local.asSlice(i * 64L, length(i)));
        }

        RdmaResult result = action.submitForResult(TIMEOUT).join();

        assertEquals(List.of("shm"), result.transports());
        for (int i = 0; i < OPS; i++) {
            long from = ((i * 31L) % OPS) * 64;
            assertEquals(-1, local.asSlice(i * 64L, length(i)).mismatch(owned.segment().asSlice(from, length(i))),
                    "op " + i + " brought its own range");
        }
    }

    /** The ranges of rdma-perf's batches and of a row store's: the same bytes again and again, neighbours, overlaps. */
    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchOfSmallReads_repeatedAndOverlappingRangesCloseTogether_eachOpBringsItsOwnRange(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, 3 * 4096, 5);
        int ops = 300;
        MemorySegment local = managers.arena().allocate(ops * 64L);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < ops; i++) {
            long from = 4000 + (i % 3 == 0 ? 0 : (i * 13L) % 200);     // a third on the same 8 bytes, across a page end
            action.readInto(owned.token().slice(from, length(i)), local.asSlice(i * 64L, length(i)));
        }

        action.submitForResult(TIMEOUT).join();

        for (int i = 0; i < ops; i++) {
            long from = 4000 + (i % 3 == 0 ? 0 : (i * 13L) % 200);
            assertEquals(-1, local.asSlice(i * 64L, length(i)).mismatch(owned.segment().asSlice(from, length(i))),
                    "op " + i + " brought its own range");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchOfSmallWrites_onSlicesOfOneBuffer_eachOpLandsInItsOwnRange_andNothingElseChanges(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, OPS * 64L, 3);
        MemorySegment before = managers.arena().allocate(OPS * 64L).copyFrom(owned.segment());
        MemorySegment source = Patterns.fill(managers.arena().allocate(OPS * 64L), 4);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < OPS; i++) {
            long to = ((i * 31L) % OPS) * 64;
            action.writeFrom(owned.token().slice(to, length(i)), source.asSlice(i * 64L, length(i)));
        }

        action.submitAndWait(TIMEOUT);

        for (int i = 0; i < OPS; i++) {
            long to = ((i * 31L) % OPS) * 64;
            MemorySegment range = owned.segment().asSlice(to, 64);
            assertEquals(-1, range.asSlice(0, length(i)).mismatch(source.asSlice(i * 64L, length(i))),
                    "op " + i + " landed in its own range");
            assertEquals(-1, range.asSlice(length(i)).mismatch(before.asSlice(to + length(i), 64 - length(i))),
                    "the bytes after op " + i + "'s range are untouched");
        }
    }

    /**
     * rdma-perf's batches and a row store's: the same bytes again and again, neighbours, overlaps,
     * together covering a span without a gap (across a page end); each byte ends as the last op
     * that wrote it left it, and nothing around the span changes.
     */
    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchOfSmallWrites_coveringTheirSpanWithoutAGap_leaveEachByteAsTheLastOpWritingItDid(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, 3 * 4096, 3);
        MemorySegment expected = managers.arena().allocate(3 * 4096).copyFrom(owned.segment());
        int ops = 300;
        MemorySegment source = Patterns.fill(managers.arena().allocate(ops * 64L), 4);
        RdmaAction action = holder.newAction();
        long covered = 4000;
        for (int i = 0; i < ops; i++) {
            long length = length(i);
            long to = i % 3 == 0 ? 4000 : covered - (i % 5);    // the same 1 to 61 bytes, or next to / over the end so far
            covered = Math.max(covered, to + length);
            action.writeFrom(owned.token().slice(to, length), source.asSlice(i * 64L, length));
            MemorySegment.copy(source, i * 64L, expected, to, length);
        }

        action.submitAndWait(TIMEOUT);

        assertEquals(-1, owned.segment().mismatch(expected),
                "each byte as the last op writing it left it, the bytes around the span untouched");
    }

    /** Close together but with a gap after each: the gaps keep the owner's bytes. */
    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchOfSmallWrites_closeTogetherWithGapsBetween_leaveTheGapsAsTheyWere(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, 3 * 4096, 3);
        MemorySegment expected = managers.arena().allocate(3 * 4096).copyFrom(owned.segment());
        MemorySegment source = Patterns.fill(managers.arena().allocate(100 * 64L), 4);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < 100; i++) {
            long length = Math.min(length(i), 40);          // 24 bytes or more of gap after each
            action.writeFrom(owned.token().slice(2000 + i * 64L, length), source.asSlice(i * 64L, length));
            MemorySegment.copy(source, i * 64L, expected, 2000 + i * 64L, length);
        }

        action.submitAndWait(TIMEOUT);

        assertEquals(-1, owned.segment().mismatch(expected), "each op's range written, every gap as it was");
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void writesAndReadsOfOneRange_inOneAction_runInTheActionsOrder(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, memory, 4096, 3);
        MemorySegment first = Patterns.fill(managers.arena().allocate(16), 5);
        MemorySegment second = Patterns.fill(managers.arena().allocate(16), 6);
        MemorySegment seenAfterFirst = managers.arena().allocate(16);
        MemorySegment seenAfterSecond = managers.arena().allocate(16);
        RdmaRemoteBuffer range = owned.token().slice(128, 16);

        holder.newAction().writeFrom(range, first).readInto(range, seenAfterFirst)
                .writeFrom(range, second).writeFrom(range, second).readInto(range, seenAfterSecond)
                .submitAndWait(TIMEOUT);

        assertEquals(-1, seenAfterFirst.mismatch(first), "the read after the first write sees it");
        assertEquals(-1, seenAfterSecond.mismatch(second), "the read after the second write sees it");
        assertEquals(-1, owned.segment().asSlice(128, 16).mismatch(second));
    }

    @ParameterizedTest
    @ValueSource(strings = {"allocate", "register"})
    void batchAlternatingTwoBuffers_eachOpBringsItsOwnBuffersRange(String memory) {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned a = own(owner, memory, 8192, 7);
        Owned b = own(owner, memory, 8192, 8);
        MemorySegment local = managers.arena().allocate(256 * 32);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < 256; i++) {
            Owned o = i % 3 == 0 ? b : a;       // runs of two on a, one on b
            action.readInto(o.token().slice(i * 32L, 32), local.asSlice(i * 32L, 32));
        }

        action.submitAndWait(TIMEOUT);

        for (int i = 0; i < 256; i++) {
            Owned o = i % 3 == 0 ? b : a;
            assertEquals(-1, local.asSlice(i * 32L, 32).mismatch(o.segment().asSlice(i * 32L, 32)), "op " + i);
        }
    }

    @Test
    void batchOfWrites_afterTheBufferWasReleased_isRefused_andChangesNothing() {
        RdmaManager owner = managers.start(new ShmTransportProvider());
        RdmaManager holder = managers.start(new ShmTransportProvider());
        Owned owned = own(owner, "register", 4096, 3);
        MemorySegment before = managers.arena().allocate(4096).copyFrom(owned.segment());
        holder.read(owned.token(), managers.arena().allocate(4096), TIMEOUT).join();     // granted and cached
        owner.release(owned.token()).join();
        MemorySegment source = Patterns.fill(managers.arena().allocate(4096), 9);
        RdmaAction action = holder.newAction();
        for (int i = 0; i < 64; i++) {
            action.writeFrom(owned.token().slice(i * 64L, 64), source.asSlice(i * 64L, 64));
        }

        Throwable failure = ShmAccessKeyTest.failureOf(action.submit(TIMEOUT));

        RemoteAccessException cause = assertInstanceOf(RemoteAccessException.class, failure.getCause());
        assertTrue(cause.getMessage().contains("buffer " + owned.token().id()), cause.getMessage());
        assertEquals(-1, owned.segment().mismatch(before), "no op of the batch reached the released buffer");
    }
}
