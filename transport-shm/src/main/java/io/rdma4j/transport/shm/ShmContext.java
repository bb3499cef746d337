package io.rdma4j.transport.shm;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * The shm transport's part of a token: who the owner process is and where it hands memory over,
 * so that a holder can tell, without asking the owner, whether it can attach at all. It carries
 * no buffer address: a buffer's address, slot and generation go to a holder only over the control
 * plane, after the owner checked the holder's access key ({@link ShmProtocol}).
 *
 * @param host         the owner process's identity
 * @param pid          the owner's process id, in its pid namespace (which {@code host} names)
 * @param socket       the 16 bytes naming the owner's hand-over socket ({@link Handover#name}): the
 *                     owner's own incarnation, whatever incarnation a (possibly forged) token names
 * @param tableAddress where the owner mapped its table: a harmless address for a holder's probe copy
 * @param memoryFile   whether the buffer lies in a memory file of the owner ({@code allocate()}),
 *                     which holders map instead of attaching to the owner
 * @param refusal      empty when the owner lets same-user holders cross-memory attach to it;
 *                     otherwise why not: holders then map its memory files, and reach its other
 *                     registered memory through its staging copy ({@link StagingChannel})
 */
public record ShmContext(HostIdentity host, long pid, byte[] socket, long tableAddress, boolean memoryFile,
                         String refusal) {

    /** 4: holders wake a dormant owner before they copy a watched buffer ({@link AccessTable}); 3 did not. */
    private static final byte FORMAT = 4;
    private static final int MAX_REFUSAL = 512;
    static final int SOCKET_BYTES = 16;

    /**
     * Validates.
     *
     * @throws NullPointerException     if {@code host}, {@code socket} or {@code refusal} is null
     * @throws IllegalArgumentException if {@code pid} is not positive, {@code socket} not 16 bytes
     *                                  or {@code refusal} longer than 512 bytes
     */
    public ShmContext {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(refusal, "refusal");
        if (socket.length != SOCKET_BYTES) {
            throw new IllegalArgumentException("shm socket id of " + socket.length + " bytes");
        }
        socket = socket.clone();
        if (pid <= 0) {
            throw new IllegalArgumentException("bad shm context: pid " + pid);
        }
        if (refusal.length() > MAX_REFUSAL) {
            throw new IllegalArgumentException("refusal text longer than " + MAX_REFUSAL);
        }
    }

    @Override
    public byte[] socket() {
        return socket.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ShmContext c && host.equals(c.host) && pid == c.pid && java.util.Arrays.equals(socket, c.socket)
                && tableAddress == c.tableAddress && memoryFile == c.memoryFile && refusal.equals(c.refusal);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, pid, java.util.Arrays.hashCode(socket), tableAddress, memoryFile, refusal);
    }

    /**
     * The token bytes: format, identity, pid, socket id, table address, memory file (one byte, 0 or
     * 1), refusal (length-prefixed UTF-8).
     *
     * @return new bytes
     */
    public byte[] toBytes() {
        byte[] text = refusal.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + HostIdentity.ENCODED_BYTES + 8 + SOCKET_BYTES + 8 + 1 + 2 + text.length)
                .put(FORMAT).put(host.toBytes()).putLong(pid).put(socket).putLong(tableAddress)
                .put((byte) (memoryFile ? 1 : 0)).putShort((short) text.length).put(text).array();
    }

    /**
     * Decodes {@link #toBytes()}.
     *
     * @param bytes the context bytes from a token
     * @return the context
     * @throws IllegalArgumentException if the bytes are not exactly one context of a known format
     */
    public static ShmContext fromBytes(byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            byte format = in.get();
            if (format != FORMAT) {
                throw new IllegalArgumentException("unknown shm context format " + format);
            }
            HostIdentity host = HostIdentity.read(in);
            long pid = in.getLong();
            byte[] socket = new byte[SOCKET_BYTES];
            in.get(socket);
            long address = in.getLong();
            byte file = in.get();
            if (file != 0 && file != 1) {
                throw new IllegalArgumentException("shm context memory-file flag " + file);
            }
            int length = in.getShort() & 0xffff;
            if (length > MAX_REFUSAL || length != in.remaining()) {
                throw new IllegalArgumentException("shm context refusal of " + length + " bytes, "
                        + in.remaining() + " left");
            }
            byte[] text = new byte[length];
            in.get(text);
            return new ShmContext(host, pid, socket, address, file == 1, new String(text, java.nio.charset.StandardCharsets.UTF_8));
        } catch (java.nio.BufferUnderflowException e) {
            throw new IllegalArgumentException("truncated shm context (" + bytes.length + " bytes)", e);
        }
    }
}
