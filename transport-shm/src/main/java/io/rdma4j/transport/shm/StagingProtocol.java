package io.rdma4j.transport.shm;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * The messages of a staging channel ({@link StagingChannel}, {@link StagingServer}): a holder asks
 * the owner to copy ranges of one registered buffer into or out of one slot of the staging file
 * they share, and the owner answers once it did (or why not). Both ends run on one host, so
 * integers are in native order. Laid out in native memory, written and read without allocating:
 * <pre>
 *   request  u8 kind (READ 1: owner copies buffer to slot; WRITE 2: slot to buffer), u8 0, u16 count,
 *            i32 slot, incarnation[16], i64 bufferId, accessKey[16],
 *            count x (i64 offset in the buffer, i64 length): packed one after another from the slot's start
 *   reply    u8 status (0, or an {@link io.rdma4j.spi.ErrorCode} wire value), u8[3] 0, i32 slot, UTF-8 text
 * </pre>
 * The channel is set up by a STAGE request on the owner's hand-over socket ({@link ShmProtocol}).
 */
final class StagingProtocol {

    static final byte READ = 1;
    static final byte WRITE = 2;
    static final int HEADER = 48;
    static final int RANGE = 16;
    /** Most ranges one request carries: a batch of small ops packed into one slot. */
    static final int MAX_RANGES = 256;
    static final int MAX_REQUEST = HEADER + MAX_RANGES * RANGE;
    static final int REPLY_HEADER = 8;
    static final int MAX_REPLY = 4096;
    static final int OK = 0;

    static final int KIND_AT = 0;
    static final int COUNT_AT = 2;
    static final int SLOT_AT = 4;
    static final int INCARNATION_AT = 8;
    static final int ID_AT = 24;
    static final int KEY_AT = 32;

    private StagingProtocol() {
    }

    /** Writes a request's header into {@code out}; ranges follow with {@link #putRange}. */
    static void putHeader(MemorySegment out, byte kind, int slot, byte[] incarnation, long bufferId, byte[] key) {
        out.set(JAVA_BYTE, KIND_AT, kind);
        out.set(JAVA_BYTE, 1, (byte) 0);
        out.set(JAVA_SHORT_UNALIGNED, COUNT_AT, (short) 0);
        out.set(JAVA_INT_UNALIGNED, SLOT_AT, slot);
        MemorySegment.copy(incarnation, 0, out, JAVA_BYTE, INCARNATION_AT, 16);
        out.set(JAVA_LONG_UNALIGNED, ID_AT, bufferId);
        MemorySegment.copy(key, 0, out, JAVA_BYTE, KEY_AT, 16);
    }

    /** Appends range {@code index} (the request's count becomes {@code index + 1}); returns the request's length. */
    static int putRange(MemorySegment out, int index, long offset, long length) {
        long at = HEADER + (long) index * RANGE;
        out.set(JAVA_LONG_UNALIGNED, at, offset);
        out.set(JAVA_LONG_UNALIGNED, at + 8, length);
        out.set(JAVA_SHORT_UNALIGNED, COUNT_AT, (short) (index + 1));
        return (int) (at + RANGE);
    }

    static int count(MemorySegment in) {
        return in.get(JAVA_SHORT_UNALIGNED, COUNT_AT) & 0xffff;
    }

    static long rangeOffset(MemorySegment in, int index) {
        return in.get(JAVA_LONG_UNALIGNED, HEADER + (long) index * RANGE);
    }

    static long rangeLength(MemorySegment in, int index) {
        return in.get(JAVA_LONG_UNALIGNED, HEADER + (long) index * RANGE + 8);
    }

    /** Writes a reply into {@code out}; returns its length. */
    static int putReply(MemorySegment out, int status, int slot, String text) {
        out.set(JAVA_BYTE, 0, (byte) status);
        out.set(JAVA_BYTE, 1, (byte) 0);
        out.set(JAVA_BYTE, 2, (byte) 0);
        out.set(JAVA_BYTE, 3, (byte) 0);
        out.set(JAVA_INT_UNALIGNED, 4, slot);
        if (text == null || text.isEmpty()) {
            return REPLY_HEADER;
        }
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, MAX_REPLY - REPLY_HEADER);
        MemorySegment.copy(bytes, 0, out, JAVA_BYTE, REPLY_HEADER, n);
        return REPLY_HEADER + n;
    }

    static int replyStatus(MemorySegment in) {
        return in.get(JAVA_BYTE, 0) & 0xff;
    }

    static int replySlot(MemorySegment in) {
        return in.get(JAVA_INT_UNALIGNED, 4);
    }

    static String replyText(MemorySegment in, int length) {
        byte[] bytes = new byte[Math.max(0, length - REPLY_HEADER)];
        MemorySegment.copy(in, JAVA_BYTE, REPLY_HEADER, bytes, 0, bytes.length);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
