package io.rdma4j.transport.shm;

import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RegistrationLookup;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The one exchange of the shm transport, over the owner's hand-over socket ({@link Handover}): a
 * holder's ATTACH request for one buffer, answered by the owner after it checked incarnation, id
 * and access key.
 * <pre>
 *   request  u8 ATTACH, incarnation[16], i64 bufferId, accessKey[16], identity (holder)
 *   granted  u8 0, i64 owner pid, i32 slot, i64 generation, i64 address, i64 size, u8 memory file (0/1)
 *            + descriptors (SCM_RIGHTS): the access table's slots file, the holder's rows file, then the
 *            buffer's memory file when it is one
 *   stage    u8 STAGE: opens a staging channel on this connection ({@link StagingChannel})
 *   staged   u8 0, i32 slots, i64 slot bytes + descriptor (SCM_RIGHTS): the staging file; the connection
 *            then carries {@link StagingProtocol} messages until either end closes it
 *   refused  u8 code (an {@link ErrorCode} wire value, or {@link #NOT_PERMITTED}), UTF-8 message; no descriptor
 * </pre>
 * All integers big-endian. Every decoder checks lengths and throws
 * {@link IllegalArgumentException} on malformed input.
 */
final class ShmProtocol {

    static final byte ATTACH = 1;
    /** Opens a staging channel on this connection ({@link StagingChannel}): one byte, no key (each later request carries one). */
    static final byte STAGE = 2;
    /** A granted STAGE: status, slots, slot bytes; the staging file's descriptor attached. */
    static final int STAGED_BYTES = 1 + 4 + 8;
    static final byte GRANTED = 0;
    /** The owner does not let holders attach (its permission step was skipped or failed). */
    static final byte NOT_PERMITTED = (byte) 200;

    private static final int KEY = 16;
    static final int REQUEST_BYTES = 1 + RegistrationLookup.INCARNATION_BYTES + 8 + KEY + HostIdentity.ENCODED_BYTES;
    static final int GRANT_BYTES = 1 + 8 + 4 + 8 + 8 + 8 + 1;
    /** Longest reply: a grant, or a refusal's code and text. */
    static final int MAX_REPLY = 4096;

    private ShmProtocol() {
    }

    /** A holder's request, decoded. */
    record Attach(byte[] incarnation, long bufferId, byte[] accessKey, HostIdentity holder) {
    }

    /**
     * What the owner grants: enough to copy the buffer and to check its release. When
     * {@code memoryFile}, the buffer is a whole memory file ({@code RdmaManager.allocate}), whose
     * descriptor comes with the grant and which the holder maps instead of using system calls.
     */
    record Grant(long pid, AccessTable.Slot slot, long address, long size, boolean memoryFile) {
    }

    static byte[] attach(byte[] incarnation, long bufferId, byte[] accessKey, HostIdentity holder) {
        if (incarnation.length != RegistrationLookup.INCARNATION_BYTES || accessKey.length != KEY) {
            throw new IllegalArgumentException("incarnation and key must be 16 bytes each");
        }
        return ByteBuffer.allocate(REQUEST_BYTES).put(ATTACH).put(incarnation).putLong(bufferId).put(accessKey)
                .put(holder.toBytes()).array();
    }

    static Attach readAttach(byte[] request) {
        if (request.length != REQUEST_BYTES || request[0] != ATTACH) {
            throw new IllegalArgumentException("not an shm ATTACH request (" + request.length + " bytes)");
        }
        ByteBuffer in = ByteBuffer.wrap(request, 1, request.length - 1);
        byte[] incarnation = new byte[RegistrationLookup.INCARNATION_BYTES];
        in.get(incarnation);
        long id = in.getLong();
        byte[] key = new byte[KEY];
        in.get(key);
        return new Attach(incarnation, id, key, HostIdentity.read(in));
    }

    static byte[] granted(Grant g) {
        return ByteBuffer.allocate(GRANT_BYTES).put(GRANTED).putLong(g.pid())
                .putInt(g.slot().index()).putLong(g.slot().generation()).putLong(g.address()).putLong(g.size())
                .put((byte) (g.memoryFile() ? 1 : 0)).array();
    }

    static byte[] refused(int code, String message) {
        byte[] whole = message.getBytes(StandardCharsets.UTF_8);
        byte[] text = java.util.Arrays.copyOf(whole, Math.min(whole.length, MAX_REPLY - 1));
        return ByteBuffer.allocate(1 + text.length).put((byte) code).put(text).array();
    }

    /** Status byte of a reply: {@link #GRANTED}, {@link #NOT_PERMITTED} or an error code. */
    static int status(byte[] reply) {
        if (reply.length == 0) {
            throw new IllegalArgumentException("empty shm reply");
        }
        return reply[0] & 0xff;
    }

    static String message(byte[] reply) {
        return new String(reply, 1, reply.length - 1, StandardCharsets.UTF_8);
    }

    static Grant readGrant(byte[] reply) {
        if (reply.length != GRANT_BYTES || reply[0] != GRANTED) {
            throw new IllegalArgumentException("not an shm grant (" + reply.length + " bytes)");
        }
        ByteBuffer in = ByteBuffer.wrap(reply, 1, reply.length - 1);
        long pid = in.getLong();
        AccessTable.Slot slot = new AccessTable.Slot(in.getInt(), in.getLong());
        long address = in.getLong();
        long size = in.getLong();
        byte file = in.get();
        if (pid <= 0 || size <= 0 || (file != 0 && file != 1)) {
            throw new IllegalArgumentException("malformed shm grant: pid " + pid + ", size " + size
                    + ", memory file " + file);
        }
        return new Grant(pid, slot, address, size, file == 1);
    }

    /** The shape of a staging channel the owner opened. */
    record Staged(int slots, long slotBytes) {
    }

    static byte[] stage() {
        return new byte[] {STAGE};
    }

    static byte[] staged(Staged s) {
        return ByteBuffer.allocate(STAGED_BYTES).put(GRANTED).putInt(s.slots()).putLong(s.slotBytes()).array();
    }

    /**
     * @throws IllegalArgumentException unless a grant of 1 to 64 slots of 4 KiB to 1 GiB each
     */
    static Staged readStaged(byte[] reply) {
        if (reply.length != STAGED_BYTES || reply[0] != GRANTED) {
            throw new IllegalArgumentException("not a staging grant (" + reply.length + " bytes)");
        }
        ByteBuffer in = ByteBuffer.wrap(reply, 1, reply.length - 1);
        int slots = in.getInt();
        long slotBytes = in.getLong();
        if (slots < 1 || slots > 64 || slotBytes < 4096 || slotBytes > (1L << 30)) {
            throw new IllegalArgumentException("staging grant of " + slots + " slots of " + slotBytes + " bytes");
        }
        return new Staged(slots, slotBytes);
    }

    /** The text of {@link ErrorCode#ACCESS_DENIED}, as the manager's lookup words it. */
    static String denied(long bufferId) {
        return "access to buffer " + bufferId + " denied: no such buffer, released, or wrong access key";
    }
}
