package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;

import java.io.IOException;

/**
 * Test helper: a holder's view of an owner's table, from descriptors the owner took from its
 * parking, as a hand-over does (the holder here is this process: pid {@link #SELF}).
 */
final class Tables {

    static final long SELF = ProcessHandle.current().pid();

    private Tables() {
    }

    /** The view of holder process {@code pid} after the owner granted it {@code slot}. */
    static AccessTable handedOver(AccessTable owner, long pid, AccessTable.Slot slot) throws IOException {
        int slots = owner.parked().take();
        int rows = owner.grant(pid, slot).take();
        try {
            return AccessTable.attach(slots, rows);
        } finally {
            Libc.close(slots);
            Libc.close(rows);
        }
    }

    /** A peer of this process (the owner, by pid) with {@code owner}'s table handed over for {@code slot}. */
    static ShmPeer peerWithTable(String name, long pid, int pidfd, AccessTable owner, AccessTable.Slot slot)
            throws IOException {
        ShmPeer peer = new ShmPeer(name, pid, pidfd, "", Handover.name("00"));
        int slots = owner.parked().take();
        int rows = owner.grant(SELF, slot).take();
        try {
            peer.useTable(slots, rows);
        } finally {
            Libc.close(slots);
            Libc.close(rows);
        }
        return peer;
    }
}
