package io.rdma4j.consumer;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * Moves 1 MiB each way between two managers, as an application that only added the rdma4j
 * dependency would, and checks the bytes. Exits 0 when all went well, 1 otherwise.
 *
 * <p>Argument: {@code class-path} or {@code module-path}, the way it was started; checked
 * against where the library's classes really came from, so a mistake in the script shows.
 */
public final class Main {

    private static final int SIZE = 1 << 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private Main() {
    }

    public static void main(String[] args) {
        String expected = args.length == 1 ? args[0] : "";
        String actual = RdmaManager.class.getModule().isNamed() ? "module-path" : "class-path";
        if (!expected.equals(actual)) {
            System.err.println("consumer: expected to run on the " + expected + ", but rdma4j was loaded from the " + actual);
            System.exit(1);
        }
        try (RdmaManager owner = RdmaManager.newBuilder().build();
             RdmaManager peer = RdmaManager.newBuilder().build();
             RdmaBuffer buffer = owner.allocate(SIZE).join();
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(buffer.remote().toBytes());

            MemorySegment outgoing = arena.allocate(SIZE);
            for (int i = 0; i < SIZE; i++) {
                outgoing.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            peer.write(remote, outgoing, TIMEOUT).join();
            MemorySegment incoming = arena.allocate(SIZE);
            peer.read(remote, incoming, TIMEOUT).join();
            long mismatch = incoming.mismatch(outgoing);
            long ownerMismatch = buffer.segment().mismatch(outgoing);
            if (mismatch != -1 || ownerMismatch != -1) {
                System.err.println("consumer: bytes differ (read back at " + mismatch + ", owner's at " + ownerMismatch + ")");
                System.exit(1);
            }
            peer.release(remote).join();
            System.out.println("consumer: 1 MiB written and read back between two managers on the " + actual
                    + (RdmaManager.class.getModule().isNamed() ? " (module " + RdmaManager.class.getModule().getName() + ")" : "")
                    + ", transports found " + peer.transports());
        }
    }
}
