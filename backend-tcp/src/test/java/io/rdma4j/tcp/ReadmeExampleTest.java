package io.rdma4j.tcp;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README's usage example, verbatim between the markers, so that it keeps compiling and working. */
class ReadmeExampleTest {

    @Test
    void readmeExample_writesReadsAndReleasesOverTcp() {
        long[] seen = new long[3];
        // --- README example begins
        try (RdmaManager owner = RdmaManager.newBuilder().build();            // usually RdmaManager.shared()
             RdmaManager peer = RdmaManager.newBuilder().build();             // ... in another process
             RdmaBuffer buffer = owner.allocate(1 << 20).join();              // owned, registered memory
             Arena arena = Arena.ofShared()) {
            byte[] token = buffer.remote().toBytes();                         // send it anywhere
            RdmaRemoteBuffer remote = RdmaRemoteBuffer.fromBytes(token);      // ... and decode it there
            MemorySegment local = arena.allocate(remote.size()).fill((byte) 7);
            peer.write(remote, local, Duration.ofSeconds(5)).join();          // buffer.segment() now holds 7s
            MemorySegment copy = arena.allocate(remote.size());
            peer.newAction().readInto(remote, copy).submit(Duration.ofSeconds(5)).join(); // batches: add more ops
            peer.release(remote).join();                                      // reaches the owner
            // --- README example ends
            seen[0] = copy.get(ValueLayout.JAVA_BYTE, 0);                     // read back what was written
            seen[1] = copy.get(ValueLayout.JAVA_BYTE, (1 << 20) - 1);
            seen[2] = owner.registeredBufferCount();                         // released from the peer
        }

        assertEquals(7, seen[0]);
        assertEquals(7, seen[1]);
        assertEquals(0, seen[2]);
    }
}
