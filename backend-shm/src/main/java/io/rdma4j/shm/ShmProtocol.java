package io.rdma4j.shm;

import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RegistrationLookup;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The one control-plane exchange of the shm transport: a holder's ATTACH request for one
 * buffer, answered by the owner after it checked incarnation, id and access key.
 * <pre>
 *   request  u8 ATTACH, incarnation[16], i64 bufferId, accessKey[16], identity (holder)
 *   granted  u8 0, i64 owner pid, i32 table fd, i32 slot, i64 generation, i64 address, i64 size,
 *            i32 memory file fd (-1: none), i64 offset in the file, i64 file size
 *   refused  u8 code (an {@link ErrorCode} wire value, or {@link #NOT_PERMITTED}), UTF-8 message
 * </pre>
 * All integers big-endian. Every decoder checks lengths and throws
 * {@link IllegalArgumentException} on malformed input.
 */
final class ShmProtocol {

    static final byte ATTACH = 1;
    static final byte GRANTED = 0;
    /** The owner does not let holders attach (its permission step was skipped or failed). */
    static final byte NOT_PERMITTED = (byte) 200;

    private static final int KEY = 16;
    static final int REQUEST_BYTES = 1 + RegistrationLookup.INCARNATION_BYTES + 8 + KEY + HostIdentity.ENCODED_BYTES;
    private static final int GRANT_BYTES = 1 + 8 + 4 + 4 + 8 + 8 + 8 + 4 + 8 + 8;

    private ShmProtocol() {
    }

    /** A holder's request, decoded. */
    record Attach(byte[] incarnation, long bufferId, byte[] accessKey, HostIdentity holder) {
    }

    /**
     * What the owner grants: enough to copy the buffer and to check its release. When the buffer
     * lies in a memory file ({@code RdmaManager.allocate}), {@code memFd} names the owner's
     * descriptor, which the holder maps instead of using system calls; otherwise it is -1.
     */
    record Grant(long pid, int tableFd, AccessTable.Slot slot, long address, long size, int memFd, long fileOffset,
                 long fileSize) {
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
        return ByteBuffer.allocate(GRANT_BYTES).put(GRANTED).putLong(g.pid()).putInt(g.tableFd())
                .putInt(g.slot().index()).putLong(g.slot().generation()).putLong(g.address()).putLong(g.size())
                .putInt(g.memFd()).putLong(g.fileOffset()).putLong(g.fileSize()).array();
    }

    static byte[] refused(int code, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
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
        int fd = in.getInt();
        AccessTable.Slot slot = new AccessTable.Slot(in.getInt(), in.getLong());
        long address = in.getLong();
        long size = in.getLong();
        int memFd = in.getInt();
        long fileOffset = in.getLong();
        long fileSize = in.getLong();
        if (pid <= 0 || fd < 0 || size <= 0 || memFd < -1
                || (memFd >= 0 && (fileOffset < 0 || fileOffset > fileSize || size > fileSize - fileOffset))) {
            throw new IllegalArgumentException("malformed shm grant: pid " + pid + ", fd " + fd + ", size " + size
                    + ", memory file " + memFd + " [" + fileOffset + ", " + fileSize + ")");
        }
        return new Grant(pid, fd, slot, address, size, memFd, fileOffset, fileSize);
    }

    /** The text of {@link ErrorCode#ACCESS_DENIED}, as the manager's lookup words it. */
    static String denied(long bufferId) {
        return "access to buffer " + bufferId + " denied: no such buffer, released, or wrong access key";
    }
}
