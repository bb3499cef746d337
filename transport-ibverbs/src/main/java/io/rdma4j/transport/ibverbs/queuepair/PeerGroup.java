package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.liveness.HolderSweep;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;
import io.rdma4j.spi.Endpoint;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The queue-pair slots from one local device to one device of one owner manager incarnation
 * ({@link Key}), as {@link HolderQueuePairs} keeps them: {@code qpsPerPeer} slots, each holding the
 * connection made on first use (or its handshake in progress), the rotation that spreads small ops
 * over them, a failed handshake remembered for every slot, and when an op last asked for one.
 *
 * <p>A group that {@link HolderQueuePairs} forgot (its owner found gone, or succeeded on its endpoint) is
 * marked {@link #retired}: whoever still holds it looks its key up again rather than making
 * connections nobody keeps track of.
 *
 * <p>Thread-safe: the slots are atomic; {@link HolderQueuePairs} makes a slot's connection under the group's lock.
 */
public final class PeerGroup {

    /**
     * What a group serves: a local device, and one device of one owner incarnation. A token's
     * decoded routes keep theirs, so an op finds its group with one lookup and builds no key. Not a
     * record: a record's {@code hashCode} and {@code equals} run through method handles, which the
     * C1 compiler does not inline, and this key is hashed once per op; this one hashes once.
     */
    public static final class Key {
        private final VerbsDevice local;
        private final Endpoint owner;
        private final String incarnation;
        private final String peerDevice;
        private final int hash;

        public Key(VerbsDevice local, Endpoint owner, String incarnation, String peerDevice) {
            this.local = Objects.requireNonNull(local, "local");
            this.owner = Objects.requireNonNull(owner, "owner");
            this.incarnation = Objects.requireNonNull(incarnation, "incarnation");
            this.peerDevice = Objects.requireNonNull(peerDevice, "peerDevice");
            this.hash = Objects.hash(local, owner, incarnation, peerDevice);
        }

        VerbsDevice local() {
            return local;
        }

        Endpoint owner() {
            return owner;
        }

        String incarnation() {
            return incarnation;
        }

        String peerDevice() {
            return peerDevice;
        }

        HolderSweep.Owner ownerIncarnation() {
            return new HolderSweep.Owner(owner, incarnation);
        }

        @Override
        public boolean equals(Object o) {
            return o == this || o instanceof Key k && hash == k.hash && local == k.local && (owner == k.owner || owner.equals(k.owner))
                    && incarnation.equals(k.incarnation) && peerDevice.equals(k.peerDevice);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public String toString() {
            return local + " to " + peerDevice + " of " + incarnation + " at " + owner;
        }
    }

    final Key key;
    final AtomicReferenceArray<CompletableFuture<VerbsConnection>> slots;
    /** The next slot an op starts on. */
    private final AtomicInteger next = new AtomicInteger();
    /** A handshake that failed: every later caller, on every slot, gets its failure. */
    volatile CompletableFuture<VerbsConnection> failedHandshake;
    /** When an op last asked for one of these connections (a write per call, as {@link #next} takes). */
    volatile long lastUse;
    /** Set when {@link HolderQueuePairs} forgot this group: look the key up again. */
    volatile boolean retired;

    PeerGroup(Key key, int qps, long now) {
        this.key = key;
        this.slots = new AtomicReferenceArray<>(qps);
        this.lastUse = now;
    }

    /**
     * The first of {@code count} consecutive slots (modulo the slot count) an op should use:
     * successive calls rotate, so that small ops spread over the queue pairs too.
     */
    public int firstSlot(int count) {
        return next.getAndAdd(count) & Integer.MAX_VALUE;
    }
}
