package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Gid;
import io.rdma4j.spi.TransportException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;

/**
 * The verbs transport's bytes: the token context, and the two control-plane messages (the
 * queue-pair handshake and the per-token access check). Big-endian; every message starts with
 * {@link #VERSION}.
 */
final class VerbsWire {

    static final byte VERSION = 1;
    static final byte HANDSHAKE = 1;
    static final byte CHECK = 2;

    private VerbsWire() {
    }

    /**
     * What a peer needs to reach one registration: device, port address (GID, LID), and the memory
     * region (address, rkey, size). Decoded once per token; {@link #checked} caches the owner's
     * answer to the access check for that token.
     */
    static final class RemoteRegion {
        final String device;
        final Gid gid;
        final int lid;
        final int port;
        final long address;
        final int rkey;
        final long size;
        volatile CompletableFuture<Void> checked;

        RemoteRegion(String device, Gid gid, int lid, int port, long address, int rkey, long size) {
            this.device = device;
            this.gid = gid;
            this.lid = lid;
            this.port = port;
            this.address = address;
            this.rkey = rkey;
            this.size = size;
        }
    }

    static byte[] context(String device, Gid gid, int lid, int port, long address, int rkey, long size) {
        byte[] name = device.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 1 + name.length + Gid.BYTES + 2 + 1 + 8 + 4 + 8);
        b.put(VERSION).put((byte) name.length).put(name).put(gid.raw()).putShort((short) lid).put((byte) port)
                .putLong(address).putInt(rkey).putLong(size);
        return b.array();
    }

    /** @throws TransportException PROTOCOL when the bytes are not a version-1 context */
    static RemoteRegion decodeContext(byte[] context) {
        try {
            ByteBuffer b = ByteBuffer.wrap(context);
            requireVersion(b.get());
            String device = string(b);
            Gid gid = gid(b);
            int lid = Short.toUnsignedInt(b.getShort());
            int port = Byte.toUnsignedInt(b.get());
            RemoteRegion r = new RemoteRegion(device, gid, lid, port, b.getLong(), b.getInt(), b.getLong());
            if (b.hasRemaining()) {
                throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs context has "
                        + b.remaining() + " trailing bytes");
            }
            return r;
        } catch (BufferUnderflowException e) {
            throw new TransportException(TransportException.Kind.PROTOCOL, "ibverbs context of " + context.length
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
