package io.rdma4j.shm;

import io.rdma4j.spi.RemoteBufferRef;

/**
 * A token's shm context as {@link ShmTransport#decodeContext} decoded it, once per token.
 */
sealed interface ShmRemote permits ShmRemote.Local, ShmRemote.Attached {

    /** The buffer's reference, as the manager handed it. */
    RemoteBufferRef ref();

    /**
     * The buffer belongs to this very manager: ops are plain memory copies under a pin.
     *
     * @param ref the buffer
     */
    record Local(RemoteBufferRef ref) implements ShmRemote {
    }

    /**
     * The buffer belongs to another process on this host that this one may attach to.
     *
     * @param ref       the buffer
     * @param peer      the owner process, attached
     * @param accessKey the token's key, copied once here so that ops compare it without copying;
     *                  never modified
     */
    record Attached(RemoteBufferRef ref, ShmPeer peer, byte[] accessKey) implements ShmRemote {
        Attached(RemoteBufferRef ref, ShmPeer peer) {
            this(ref, peer, ref.accessKey());
        }
    }
}
