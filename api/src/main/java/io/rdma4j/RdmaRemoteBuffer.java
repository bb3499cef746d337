package io.rdma4j;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RemoteBufferRef;

import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A token that lets any process address a buffer registered with some {@link RdmaManager}:
 * immutable, small, and safe to send anywhere ({@link #toBytes()} / {@link #fromBytes(byte[])}).
 *
 * <p>It carries the owner manager's incarnation and control endpoint, the buffer's id, the range
 * of the buffer it names (the whole buffer, or a {@linkplain #slice(long, long) slice} of it), a
 * random 128-bit access key that every remote request must present, and one opaque context per
 * transport the owner registered the buffer with, keyed by transport name. A context for a
 * transport the reader does not run is kept (it survives re-encoding) and ignored.
 *
 * <p>A slice is a token for part of a registered buffer: same id, key and contexts, plus an
 * offset into the buffer and a length. Operations on a slice move exactly that range, with the
 * same prefix rules as on a whole buffer; releasing a slice releases the whole registration.
 *
 * <p><b>Read-only buffers.</b> A token of a read-only registration ({@link #isReadOnly()}: the
 * owner registered a read-only segment) lets its holder read and release the buffer, never write
 * it: {@link RdmaAction#writeFrom} refuses such a token at once, and the owner's side refuses any
 * write that arrives anyway (a token edited to claim write access) with a
 * {@link RemoteAccessException} saying the buffer is read-only, without changing a byte. Slices
 * keep the flag.
 *
 * <p><b>Warning:</b> the token is a capability. Whoever holds its bytes can read, overwrite (unless
 * read-only) and release the buffer; send it only to peers you trust with that.
 *
 * <h2>Wire format, version 2</h2>
 * Big-endian: magic {@code "RDMB"}, version {@code u8} (2), flags {@code u8}, incarnation
 * (16 bytes), id {@code i64}, offset {@code i64}, length {@code i64}, access key (16 bytes), host
 * length {@code u8} and UTF-8 host, port {@code u16}, context count {@code u8}, then per context:
 * name length {@code u8} and ASCII name, context length {@code u16} and bytes; last, a CRC32C
 * ({@code u32}) of every byte before it. Nothing may follow.
 *
 * <p>Flags: bit 0 ({@code 0x01}) marks a read-only buffer; the other bits are 0, and a reader
 * refuses a token with a bit it does not know ("unknown flags"). A writable buffer's token is
 * byte for byte what rdma4j wrote before read-only buffers existed; a read-only buffer's token is
 * refused by such older readers (they know no flags) rather than taken for a writable one.
 *
 * <p>The version byte stays where version 1 had it, so a reader of another version refuses the
 * token by name ("unsupported version") instead of misreading it. Version 1 (no offset, no
 * checksum) is not read any more. The checksum makes every corruption of up to 32 consecutive
 * bits, and in particular every single-byte change, a clear error instead of a token for some
 * other buffer.
 *
 * <p>{@code TokenCodec} writes and reads it ({@link #toBytes()}, {@link #fromBytes(byte[])}).
 */
public final class RdmaRemoteBuffer {

    /** Current wire format version. */
    public static final int VERSION = 2;
    /** Largest encoded token accepted by {@link #fromBytes(byte[])}. */
    public static final int MAX_ENCODED_BYTES = 128 * 1024;
    /** Most transport contexts a token may carry. */
    public static final int MAX_CONTEXTS = 16;
    /** Largest single transport context. */
    public static final int MAX_CONTEXT_BYTES = io.rdma4j.spi.Transport.MAX_CONTEXT_BYTES;
    /** Length of the access key and of the incarnation id. */
    public static final int KEY_BYTES = 16;
    /** The flags bit of a read-only buffer ({@link #isReadOnly()}). */
    static final int FLAG_READ_ONLY = 0x01;

    /** Length of the trailing checksum. */
    static final Pattern NAME = Pattern.compile("[a-z0-9_-]{1,32}");
    private static final HexFormat HEX = HexFormat.of();

    private final byte[] incarnation;
    private final Endpoint owner;
    private final long id;
    private final long offset;
    private final long size;
    private final byte[] accessKey;
    private final Map<String, byte[]> contexts;
    private final boolean readOnly;

    /** A token for a whole, writable buffer of {@code size} bytes. */
    RdmaRemoteBuffer(byte[] incarnation, Endpoint owner, long id, long size, byte[] accessKey,
                     Map<String, byte[]> contexts) {
        this(incarnation, owner, id, 0, size, accessKey, contexts, false);
    }

    /** A token for bytes {@code [offset, offset + size)} of a buffer, read-only or not. */
    RdmaRemoteBuffer(byte[] incarnation, Endpoint owner, long id, long offset, long size, byte[] accessKey,
                             Map<String, byte[]> contexts, boolean readOnly) {
        if (incarnation.length != KEY_BYTES || accessKey.length != KEY_BYTES) {
            throw new IllegalArgumentException("incarnation and access key must be " + KEY_BYTES + " bytes");
        }
        if (id < 0) {
            throw new IllegalArgumentException("buffer id must not be negative: " + id);
        }
        if (size < 1) {
            throw new IllegalArgumentException("buffer size must be positive: " + size);
        }
        if (offset < 0 || offset > Long.MAX_VALUE - size) {
            throw new IllegalArgumentException("slice offset " + offset + " of a " + size + "-byte slice is out of range");
        }
        if (contexts.size() > MAX_CONTEXTS) {
            throw new IllegalArgumentException("at most " + MAX_CONTEXTS + " transport contexts, got " + contexts.size());
        }
        LinkedHashMap<String, byte[]> copy = new LinkedHashMap<>();
        contexts.forEach((name, ctx) -> {
            if (!NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("transport name must match " + NAME + ": '" + name + "'");
            }
            if (ctx.length > MAX_CONTEXT_BYTES) {
                throw new IllegalArgumentException("context of transport " + name + " is " + ctx.length
                        + " bytes, more than " + MAX_CONTEXT_BYTES);
            }
            copy.put(name, ctx.clone());
        });
        this.incarnation = incarnation.clone();
        this.owner = Objects.requireNonNull(owner, "owner");
        this.id = id;
        this.offset = offset;
        this.size = size;
        this.accessKey = accessKey.clone();
        this.contexts = Collections.unmodifiableMap(copy);
        this.readOnly = readOnly;
    }

    /**
     * The id the owner assigned; unique for the owner manager's lifetime.
     *
     * @return the buffer id, never negative
     */
    public long id() {
        return id;
    }

    /**
     * The length in bytes of what this token names: the whole buffer's, or the slice's.
     *
     * @return the size, at least 1
     */
    public long size() {
        return size;
    }

    /**
     * Where what this token names starts in the registered buffer: 0 for a whole buffer.
     *
     * @return the offset in bytes, never negative
     */
    public long offset() {
        return offset;
    }

    /**
     * A token for part of what this token names: bytes {@code [offset, offset + length)} of it.
     * The slice has the same id, key, owner and transports; its {@link #offset()} counts from the
     * start of the registered buffer, so slices of slices compose. Nothing is sent to the owner:
     * it checks the range on every request.
     *
     * @param offset where the slice starts, relative to this token's range
     * @param length the slice's length in bytes, at least 1
     * @return the new token; this one is unchanged
     * @throws IllegalArgumentException if {@code offset} is negative, {@code length} is not
     *                                  positive, or the slice does not fit inside this token's
     *                                  {@link #size()} bytes
     */
    public RdmaRemoteBuffer slice(long offset, long length) {
        if (offset < 0 || length < 1 || offset > size - length) {
            throw new IllegalArgumentException("slice [" + offset + ", " + offset + " + " + length + ") is not inside "
                    + "the " + size + " bytes of " + this + " (need offset >= 0, length >= 1, offset + length <= " + size + ")");
        }
        return new RdmaRemoteBuffer(incarnation, owner, id, this.offset + offset, length, accessKey, contexts, readOnly);
    }

    /**
     * Whether the owner registered the buffer read-only: remote writes are not allowed. Writing
     * through this token fails ({@link RdmaAction#writeFrom} throws); reading and releasing work.
     *
     * @return {@code true} for a read-only buffer, {@code false} when holders may write it
     */
    public boolean isReadOnly() {
        return readOnly;
    }

    /**
     * The owner manager's control endpoint.
     *
     * @return where the owner answers releases and transport handshakes
     */
    public Endpoint owner() {
        return owner;
    }

    /**
     * The owner manager's incarnation: 32 hex digits, new for every manager instance.
     *
     * @return the incarnation, in lower-case hex
     */
    public String ownerIncarnation() {
        return HEX.formatHex(incarnation);
    }

    /**
     * Names of the transports the owner registered this buffer with, in the owner's priority order.
     *
     * @return an unmodifiable set of transport names
     */
    public Set<String> transports() {
        return contexts.keySet();
    }

    /**
     * Whether the owner registered the buffer with {@code transport}.
     *
     * @param transport a transport name, e.g. {@code "tcp"}
     * @return {@code true} if the token carries a context for it
     */
    public boolean hasTransport(String transport) {
        return contexts.containsKey(transport);
    }

    /**
     * What {@code transport} needs to reach this buffer, for that transport.
     *
     * @param transport a transport name, e.g. {@code "tcp"}
     * @return a new reference holding that transport's context
     * @throws IllegalArgumentException if the token carries no context for it
     */
    RemoteBufferRef refFor(String transport) {
        byte[] ctx = contexts.get(transport);
        if (ctx == null) {
            throw new IllegalArgumentException("token carries no context for transport " + transport + ": " + this);
        }
        return new RemoteBufferRef(owner, ownerIncarnation(), id, size, accessKey, ctx);
    }

    byte[] accessKey() {
        return accessKey.clone();
    }

    /** The transports' contexts, unmodifiable, in encoding order; the arrays are this token's own: the codec only reads them. */
    Map<String, byte[]> contexts() {
        return contexts;
    }

    /** The owner's incarnation, as sent in requests. */
    byte[] incarnationBytes() {
        return incarnation.clone();
    }

    boolean isOwnedBy(byte[] incarnationId) {
        return Arrays.equals(incarnation, incarnationId);
    }

    /**
     * Encodes the token; {@link #fromBytes(byte[])} reads it back equal.
     *
     * @return a new array holding the wire form; the caller owns it
     */
    public byte[] toBytes() {
        return TokenCodec.encode(this);
    }

    /**
     * Decodes a token written by {@link #toBytes()}. Strict: the checksum is verified before
     * any field is read, every length is bounds-checked before anything is allocated, and
     * trailing bytes are refused.
     *
     * @param bytes an encoded token; neither modified nor kept
     * @return the decoded token
     * @throws IllegalArgumentException saying what is wrong and, where it applies, at which byte
     *                                  offset: null or empty input, more than
     *                                  {@value #MAX_ENCODED_BYTES} bytes, wrong magic, another
     *                                  version (version 1 tokens included), a checksum mismatch
     *                                  (the token was corrupted), truncation, bad lengths, ranges
     *                                  or names, duplicate transports, trailing bytes
     */
    public static RdmaRemoteBuffer fromBytes(byte[] bytes) {
        return TokenCodec.decode(bytes);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof RdmaRemoteBuffer t)) {
            return false;
        }
        if (id != t.id || offset != t.offset || size != t.size || readOnly != t.readOnly
                || !Arrays.equals(incarnation, t.incarnation)
                || !Arrays.equals(accessKey, t.accessKey) || !owner.equals(t.owner)
                || !contexts.keySet().equals(t.contexts.keySet())) {
            return false;
        }
        for (var e : contexts.entrySet()) {
            if (!Arrays.equals(e.getValue(), t.contexts.get(e.getKey()))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(incarnation), id, offset, size);
    }

    /** Shows everything but the access key. */
    @Override
    public String toString() {
        return "RdmaRemoteBuffer[id=" + id + ", offset=" + offset + ", size=" + size + ", owner=" + owner + ", incarnation="
                + ownerIncarnation() + ", transports=" + contexts.keySet() + (readOnly ? ", read-only" : "") + "]";
    }


}
