package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Gid;
import io.rdma4j.spi.TransportException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The verbs transport's bytes: the token context, and the two control-plane messages (the
 * queue-pair handshake and the per-token access check). Big-endian; every control message starts
 * with {@link #VERSION}, every token context with {@link #CONTEXT_VERSION}.
 */
final class VerbsWire {

    static final byte VERSION = 1;
    /** Version of the token context: 2 carries one memory region per device (1 carried one device). */
    static final byte CONTEXT_VERSION = 2;
    /** The most devices one token context names. */
    static final int MAX_DEVICES = 16;
    static final byte HANDSHAKE = 1;
    static final byte CHECK = 2;

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

    /** One side of the queue-pair handshake: the device it is on and how to reach its queue pair. */
    record Endpoint(String device, int qpNumber, int psn, Gid gid, int lid, int mtu) {
        byte[] encode(byte type, String wantedDevice) {
            byte[] name = device.getBytes(StandardCharsets.UTF_8);
            byte[] wanted = wantedDevice.getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(2 + 1 + name.length + 1 + wanted.length + 4 + 4 + Gid.BYTES + 2 + 1);
            b.put(VERSION).put(type).put((byte) name.length).put(name).put((byte) wanted.length).put(wanted)
                    .putInt(qpNumber).putInt(psn).put(gid.raw()).putShort((short) lid).put((byte) mtu);
            return b.array();
        }

        /** Reads what {@link #encode} wrote after the version and type bytes; returns the wanted device in {@code wanted[0]}. */
        static Endpoint decode(ByteBuffer b, String[] wanted) {
            try {
                String device = VerbsWire.string(b);
                wanted[0] = VerbsWire.string(b);
                return new Endpoint(device, b.getInt(), b.getInt(), VerbsWire.gid(b), Short.toUnsignedInt(b.getShort()),
                        Byte.toUnsignedInt(b.get()));
            } catch (BufferUnderflowException e) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "truncated ibverbs handshake", e);
            }
        }
    }

    static byte[] check(byte[] incarnation, long bufferId, byte[] accessKey, long offset, long length) {
        ByteBuffer b = ByteBuffer.allocate(2 + 1 + incarnation.length + 8 + 1 + accessKey.length + 16);
        b.put(VERSION).put(CHECK).put((byte) incarnation.length).put(incarnation).putLong(bufferId)
                .put((byte) accessKey.length).put(accessKey).putLong(offset).putLong(length);
        return b.array();
    }

    /** The answer to a check: 0 and no text when allowed, else an {@code ErrorCode} wire byte and the owner's text. */
    static byte[] answer(int code, String message) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(1 + text.length).put((byte) code).put(text).array();
    }

    static void requireVersion(byte v) {
        if (v != VERSION) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs message version " + v
                    + " is not supported (this side speaks " + VERSION + ")");
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] a = new byte[Byte.toUnsignedInt(b.get())];
        b.get(a);
        return a;
    }

    private static String string(ByteBuffer b) {
        return new String(bytes(b), StandardCharsets.UTF_8);
    }

    private static Gid gid(ByteBuffer b) {
        byte[] raw = new byte[Gid.BYTES];
        b.get(raw);
        return Gid.of(raw);
    }
}
