package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.spi.TransportException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The verbs transport's bytes: the token context, and the three control-plane messages (the
 * queue-pair handshake, the per-token access check, and the owner's liveness probe of a holder).
 * Big-endian; every control message starts with {@link #VERSION}, every token context with
 * {@link #CONTEXT_VERSION}.
 */
public final class VerbsWire {

    /**
     * Version of the control messages: 2 names, in the handshake, the sender's and the addressee's
     * manager incarnations and the slot (1 named neither).
     */
    public static final byte VERSION = 2;
    /** Version of the token context: 2 carries one memory region per device (1 carried one device). */
    static final byte CONTEXT_VERSION = 2;
    /** The most devices one token context names. */
    static final int MAX_DEVICES = 16;
    static final byte HANDSHAKE = 1;
    static final byte CHECK = 2;
    /**
     * The liveness probe ({@link Probe}). Added without a new version: an older rdma4j of the same
     * version refuses it as an unknown request type, which the prober takes as no answer.
     */
    public static final byte PROBE = 3;

    private VerbsWire() {
    }

    /** One memory region of a registration: the device it is on, how to reach that device's port, and its rkey. */
    record RemoteMr(String device, Gid gid, int lid, int port, int rkey) {
    }

    /**
     * What a peer needs to reach one registration: its address and size, and one memory region
     * per device the owner registered it on. Decoded once per token; {@link #checked} caches the
     * owner's answer to the access check for that token.
     */
    static final class RemoteRegion {
        final long address;
        final long size;
        final List<RemoteMr> mrs;
        volatile CompletableFuture<Void> checked;
        /** The owner's answer for writes: {@link #checked}, failing when the owner said the buffer is read-only. */
        volatile CompletableFuture<Void> writesChecked;

        RemoteRegion(long address, long size, List<RemoteMr> mrs) {
            this.address = address;
            this.size = size;
            this.mrs = List.copyOf(mrs);
        }

        /** The owner's device names, in the token's order. */
        List<String> devices() {
            return mrs.stream().map(RemoteMr::device).toList();
        }
    }

    /**
     * A token context (version {@link #CONTEXT_VERSION}): address, size, then per device its name,
     * GID, LID, port and rkey.
     *
     * @throws IllegalArgumentException for no region or more than {@link #MAX_DEVICES}
     */
    static byte[] context(long address, long size, List<RemoteMr> mrs) {
        if (mrs.isEmpty() || mrs.size() > MAX_DEVICES) {
            throw new IllegalArgumentException("a token context names 1 to " + MAX_DEVICES + " devices, not " + mrs.size());
        }
        int bytes = 1 + 8 + 8 + 1;
        for (RemoteMr m : mrs) {
            bytes += 1 + m.device().getBytes(StandardCharsets.UTF_8).length + Gid.BYTES + 2 + 1 + 4;
        }
        ByteBuffer b = ByteBuffer.allocate(bytes);
        b.put(CONTEXT_VERSION).putLong(address).putLong(size).put((byte) mrs.size());
        for (RemoteMr m : mrs) {
            byte[] name = m.device().getBytes(StandardCharsets.UTF_8);
            b.put((byte) name.length).put(name).put(m.gid().raw()).putShort((short) m.lid()).put((byte) m.port()).putInt(m.rkey());
        }
        return b.array();
    }

    /** @throws TransportException PROTOCOL when the bytes are not a version-{@value #CONTEXT_VERSION} context, saying what is wrong */
    static RemoteRegion decodeContext(byte[] context) {
        if (context.length == 0) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs token context is empty");
        }
        if (context[0] != CONTEXT_VERSION) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs token context version " + context[0]
                    + (context[0] == 1 ? " (one device, from an older rdma4j)" : "") + " is not supported: this side reads version "
                    + CONTEXT_VERSION);
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(context, 1, context.length - 1);
            long address = b.getLong();
            long size = b.getLong();
            int count = Byte.toUnsignedInt(b.get());
            if (count == 0 || count > MAX_DEVICES || size < 0) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs token context is garbled: "
                        + count + " devices, size " + size);
            }
            List<RemoteMr> mrs = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                mrs.add(new RemoteMr(string(b), gid(b), Short.toUnsignedInt(b.getShort()), Byte.toUnsignedInt(b.get()), b.getInt()));
            }
            if (b.hasRemaining()) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs token context has "
                        + b.remaining() + " trailing bytes");
            }
            return new RemoteRegion(address, size, mrs);
        } catch (BufferUnderflowException e) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs token context of " + context.length
                    + " bytes is truncated", e);
        }
    }

    /** How to reach one queue pair: the device it is on, its number, first PSN, the port's GID, LID and active MTU. */
    public record Endpoint(String device, int qpNumber, int psn, Gid gid, int lid, int mtu) {
    }

    /**
     * One side's message of the queue-pair handshake (request and reply alike): the sender's
     * manager incarnation and the incarnation it addresses, the addressee's device it wants, the
     * slot among the sender's queue pairs to that device, and the sender's queue pair. Incarnations
     * are hex, as tokens carry them.
     */
    public record Handshake(String fromIncarnation, String toIncarnation, String toDevice, int slot, Endpoint endpoint) {

        /** Version, type {@link #HANDSHAKE}, then the fields, each string or incarnation preceded by its length in one byte. */
        public byte[] encode() {
            byte[] name = utf8(endpoint.device());
            byte[] wanted = utf8(toDevice);
            byte[] from = HexFormat.of().parseHex(fromIncarnation);
            byte[] to = HexFormat.of().parseHex(toIncarnation);
            ByteBuffer b = ByteBuffer.allocate(2 + 1 + from.length + 1 + to.length + 1 + wanted.length + 4
                    + 1 + name.length + 4 + 4 + Gid.BYTES + 2 + 1);
            b.put(VERSION).put(HANDSHAKE).put((byte) from.length).put(from).put((byte) to.length).put(to)
                    .put((byte) wanted.length).put(wanted).putInt(slot)
                    .put((byte) name.length).put(name).putInt(endpoint.qpNumber()).putInt(endpoint.psn())
                    .put(endpoint.gid().raw()).putShort((short) endpoint.lid()).put((byte) endpoint.mtu());
            return b.array();
        }

        /**
         * Reads what {@link #encode} wrote after the version and type bytes.
         *
         * @throws TransportException PROTOCOL when the message is truncated or has trailing bytes
         */
        static Handshake decode(ByteBuffer b) {
            try {
                HexFormat hex = HexFormat.of();
                String from = hex.formatHex(bytes(b));
                String to = hex.formatHex(bytes(b));
                String wanted = string(b);
                int slot = b.getInt();
                Endpoint e = new Endpoint(string(b), b.getInt(), b.getInt(), gid(b), Short.toUnsignedInt(b.getShort()),
                        Byte.toUnsignedInt(b.get()));
                if (b.hasRemaining()) {
                    throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs handshake has "
                            + b.remaining() + " trailing bytes");
                }
                return new Handshake(from, to, wanted, slot, e);
            } catch (BufferUnderflowException e) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "truncated ibverbs handshake", e);
            }
        }

        /**
         * Decodes a whole handshake message, version and type included.
         *
         * @throws TransportException PROTOCOL for another version (saying which), another type, or garbled bytes
         */
        public static Handshake decodeMessage(byte[] message) {
            return decode(body(message, HANDSHAKE, "handshake"));
        }
    }

    /**
     * The owner's question to a holder manager it keeps queue pairs for, and the answer: request
     * and reply alike carry one manager incarnation (hex): the request the one the owner believes
     * is at the holder's endpoint, the reply the one that answers there.
     */
    public record Probe(String incarnation) {

        /** Version, type {@link #PROBE}, the incarnation preceded by its length in one byte. */
        public byte[] encode() {
            byte[] raw = HexFormat.of().parseHex(incarnation);
            return ByteBuffer.allocate(2 + 1 + raw.length).put(VERSION).put(PROBE).put((byte) raw.length).put(raw).array();
        }

        /**
         * Reads what {@link #encode} wrote after the version and type bytes.
         *
         * @throws TransportException PROTOCOL when the message names no incarnation, is truncated or has trailing bytes
         */
        static Probe decode(ByteBuffer b) {
            byte[] raw;
            try {
                raw = bytes(b);
            } catch (BufferUnderflowException e) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "truncated ibverbs probe", e);
            }
            if (raw.length == 0 || b.hasRemaining()) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs probe is garbled: "
                        + (raw.length == 0 ? "it names no incarnation" : b.remaining() + " trailing bytes"));
            }
            return new Probe(HexFormat.of().formatHex(raw));
        }

        /**
         * Decodes a whole probe message, version and type included.
         *
         * @throws TransportException PROTOCOL for another version (saying which), another type, or garbled bytes
         */
        public static Probe decodeMessage(byte[] message) {
            return decode(body(message, PROBE, "probe"));
        }
    }

    /**
     * The bytes after the version and type of a control message that must be of {@code type}
     * ({@code what} names it in errors).
     *
     * @throws TransportException PROTOCOL for another version (saying which), another type, or fewer than two bytes
     */
    private static ByteBuffer body(byte[] message, byte type, String what) {
        ByteBuffer b = ByteBuffer.wrap(message);
        try {
            requireVersion(b.get());
            byte actual = b.get();
            if (actual != type) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "expected an ibverbs " + what
                        + ", got message type " + actual);
            }
        } catch (BufferUnderflowException e) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "truncated ibverbs " + what, e);
        }
        return b;
    }

    /**
     * A holder's access check of one token, as the owner reads it: the owner incarnation the token
     * names, the buffer id, the access key and the range.
     */
    record Check(byte[] incarnation, long bufferId, byte[] accessKey, long offset, long length) {

        /**
         * Reads what {@link VerbsWire#check} wrote after the version and type bytes.
         *
         * @throws TransportException PROTOCOL when the message is truncated or has trailing bytes
         */
        static Check decode(ByteBuffer b) {
            try {
                Check c = new Check(bytes(b), b.getLong(), bytes(b), b.getLong(), b.getLong());
                if (b.hasRemaining()) {
                    throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs access check has "
                            + b.remaining() + " trailing bytes");
                }
                return c;
            } catch (BufferUnderflowException e) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "truncated ibverbs access check", e);
            }
        }

        /**
         * Decodes a whole check message, version and type included.
         *
         * @throws TransportException PROTOCOL for another version (saying which), another type, or garbled bytes
         */
        static Check decodeMessage(byte[] message) {
            return decode(body(message, CHECK, "access check"));
        }
    }

    static byte[] check(byte[] incarnation, long bufferId, byte[] accessKey, long offset, long length) {
        ByteBuffer b = ByteBuffer.allocate(2 + 1 + incarnation.length + 8 + 1 + accessKey.length + 16);
        b.put(VERSION).put(CHECK).put((byte) incarnation.length).put(incarnation).putLong(bufferId)
                .put((byte) accessKey.length).put(accessKey).putLong(offset).putLong(length);
        return b.array();
    }

    /** The flags byte of an allowing answer to a check: the registration is read-only. */
    static final byte CHECK_READ_ONLY = 1;

    /**
     * The answer to a check that allows the access: 0, then a flags byte ({@link #CHECK_READ_ONLY}
     * for a read-only registration). A holder of an older rdma4j reads only the 0; an older
     * owner sends the 0 alone (no flags: writable).
     */
    static byte[] allowed(boolean readOnly) {
        return new byte[] {0, readOnly ? CHECK_READ_ONLY : 0};
    }

    /** Whether an allowing answer ({@link #allowed}) says the registration is read-only. */
    static boolean allowsReadOnly(byte[] reply) {
        return reply.length > 1 && (reply[1] & CHECK_READ_ONLY) != 0;
    }

    /** The answer to a check: 0 and no text when allowed, else an {@code ErrorCode} wire byte and the owner's text. */
    static byte[] answer(int code, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + text.length).put((byte) code).put(text).array();
    }

    /** @throws TransportException PROTOCOL when {@code v} is not {@link #VERSION}, saying which version each side speaks */
    static void requireVersion(byte v) {
        if (v != VERSION) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs message version " + v
                    + (v == 1 ? " (from an older rdma4j, whose handshake names no incarnations or slot)" : "")
                    + " is not supported (this side speaks " + VERSION + ")");
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[Byte.toUnsignedInt(b.get())];
        b.get(a);
        return a;
    }

    /**
     * A name preceded by its length in one byte.
     *
     * @throws TransportException PROTOCOL when the bytes are not UTF-8: a name that decoded with
     *                            replacement characters would name another device than the peer meant
     */
    private static String string(ByteBuffer b) {
        byte[] raw = bytes(b);
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException e) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs message names a device that is not UTF-8: "
                    + HexFormat.of().formatHex(raw), e);
        }
    }

    /** The UTF-8 bytes of {@code s}, which must fit a one-byte length. */
    private static byte[] utf8(String s) {
        byte[] a = s.getBytes(StandardCharsets.UTF_8);
        if (a.length > 255) {
            throw new IllegalArgumentException("longer than 255 bytes: " + s);
        }
        return a;
    }

    private static Gid gid(ByteBuffer b) {
        byte[] raw = new byte[Gid.BYTES];
        b.get(raw);
        return Gid.of(raw);
    }
}
