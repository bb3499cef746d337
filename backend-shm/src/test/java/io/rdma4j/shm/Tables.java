package io.rdma4j.shm;

import io.rdma4j.shm.ffi.Libc;

import java.io.IOException;

/** Test helper: a holder's view of an owner's table, mapped from a descriptor the owner took from its parking, as a hand-over does. */
final class Tables {

    private Tables() {
    }

    static AccessTable handedOver(AccessTable owner) throws IOException {
        int fd = owner.parked().take();
        try {
            return AccessTable.attach(fd);
        } finally {
            Libc.close(fd);
        }
    }

    /** A peer of this process (the owner, by pid) with {@code owner}'s table handed over. */
    static ShmPeer peerWithTable(String name, long pid, int pidfd, AccessTable owner) throws IOException {
        ShmPeer peer = new ShmPeer(name, pid, pidfd, "", Handover.name("00"));
        int fd = owner.parked().take();
        try {
            peer.useTable(fd);
        } finally {
            Libc.close(fd);
        }
        return peer;
    }
}
