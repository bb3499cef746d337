package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Endpoint;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A hand-rolled client of the data endpoint that writes frames byte by byte as the protocol
 * specifies them ({@link TcpProtocol}), so that tests pin the wire format and can send anything.
 * A 30-second socket timeout is only a safety net against a hanging test.
 */
final class RawDataClient implements AutoCloseable {

    static final int WRITE = 0x01;
    static final int READ = 0x02;
    static final int OK = 0x11;
    static final int DATA = 0x12;
    static final int ERROR = 0x13;

    /** A reply: its type and body; for ERROR, {@code code} and {@code text} too. */
    record Reply(int type, byte[] body) {
        int code() {
            return body[0] & 0xff;
        }

        String text() {
            return new String(body, 3, body.length - 3, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;

    RawDataClient(Endpoint endpoint) throws IOException {
        socket = new Socket(endpoint.host(), endpoint.port());
        socket.setSoTimeout(30_000);
        out = socket.getOutputStream();
        in = new DataInputStream(socket.getInputStream());
    }

    static byte[] request(int type, long bufferId, byte[] key, byte[] incarnation, long offset, long length, byte[] payload) {
        ByteBuffer b = ByteBuffer.allocate(64 + payload.length);
        b.putShort((short) 0x5254).put((byte) 2).put((byte) type).putInt(56 + payload.length);
        b.putLong(bufferId).put(key).put(incarnation).putLong(offset).putLong(length).put(payload);
        return b.array();
    }

    void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    void read(long bufferId, byte[] key, byte[] incarnation, long offset, long length) throws IOException {
        send(request(READ, bufferId, key, incarnation, offset, length, new byte[0]));
    }

    void write(long bufferId, byte[] key, byte[] incarnation, long offset, byte[] payload) throws IOException {
        send(request(WRITE, bufferId, key, incarnation, offset, payload.length, payload));
    }

    /** Half-closes: the server sees end of stream. */
    void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    Reply reply() throws IOException {
        int magic = in.readUnsignedShort();
        int version = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        int length = in.readInt();
        if (magic != 0x5254 || version != 2) {
            throw new IOException("not a reply frame: magic " + Integer.toHexString(magic) + ", version " + version);
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return new Reply(type, body);
    }

    /** Reads until the server closes the connection; true when it did (end of stream or reset). */
    boolean closedByServer() throws IOException {
        try {
            while (in.read() >= 0) {
                // skip whatever came before the close (an ERROR reply)
            }
            return true;
        } catch (EOFException | SocketException closed) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
