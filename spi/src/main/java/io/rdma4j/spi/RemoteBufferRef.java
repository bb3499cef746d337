package io.rdma4j.spi;

import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

/**
 * What a transport sees of a remote buffer: the fields of the token it needs, and its own
 * context bytes from the token.
 *
 * @param owner       the owner manager's control endpoint (handshakes go there)
 * @param incarnation the owner manager's random 128-bit incarnation, hex; distinguishes a
 *                    restarted owner on the same endpoint
 * @param bufferId    the id the owner assigned
 * @param size        the buffer's length in bytes, at least 1
 * @param accessKey   the 16-byte secret every remote request must present
 * @param context     this transport's context bytes, as its {@link Transport#register} returned them
 */
public record RemoteBufferRef(Endpoint owner, String incarnation, long bufferId, long size,
                              byte[] accessKey, byte[] context) {

    /**
     * Checks the components and copies both arrays, so that later changes by the caller do not
     * affect the record.
     *
     * @param owner       the owner manager's control endpoint (handshakes go there)
     * @param incarnation the owner manager's random 128-bit incarnation, hex; distinguishes a
     *                    restarted owner on the same endpoint
     * @param bufferId    the id the owner assigned
     * @param size        the buffer's length in bytes, at least 1
     * @param accessKey   the 16-byte secret every remote request must present
     * @param context     this transport's context bytes, as its {@link Transport#register} returned them
     * @throws NullPointerException if {@code owner}, {@code incarnation}, {@code accessKey} or
     *                              {@code context} is {@code null}
     */
    public RemoteBufferRef {
        Objects.requireNonNull(owner, "owner");
        Objects.requireNonNull(incarnation, "incarnation");
        Objects.requireNonNull(accessKey, "accessKey");
        Objects.requireNonNull(context, "context");
        accessKey = accessKey.clone();
        context = context.clone();
    }

    /**
     * The 16-byte secret every remote request must present.
     *
     * @return a new copy; changing it does not affect this record
     */
    @Override
    public byte[] accessKey() {
        return accessKey.clone();
    }

    /**
     * This transport's context bytes, as its {@link Transport#register} returned them.
     *
     * @return a new copy; changing it does not affect this record
     */
    @Override
    public byte[] context() {
        return context.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RemoteBufferRef r && owner.equals(r.owner) && incarnation.equals(r.incarnation)
                && bufferId == r.bufferId && size == r.size && Arrays.equals(accessKey, r.accessKey)
                && Arrays.equals(context, r.context);
    }

    @Override
    public int hashCode() {
        return Objects.hash(owner, incarnation, bufferId, size, Arrays.hashCode(context));
    }

    /** Never prints the access key. */
    @Override
    public String toString() {
        return "RemoteBufferRef[owner=" + owner + ", incarnation=" + incarnation + ", id=" + bufferId
                + ", size=" + size + ", context=" + HexFormat.of().formatHex(context) + "]";
    }
}
