package io.rdma4j.transport.shm;

import io.rdma4j.spi.RemoteBufferRef;

/**
 * A token's shm context as {@link ShmTransport#decodeContext} decoded it, once per token.
 */
sealed interface ShmRemote permits ShmRemote.Local, ShmRemote.Attached, ShmRemote.Staged {

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

    /**
     * The buffer belongs to another process on this host whose memory this one reaches through the
     * owner's staging copy ({@link StagingChannel}): memory that is not one of the owner's memory
     * files where cross-memory attach is not permitted, or any buffer when
     * {@link ShmSettings#FORCE_STAGING} says so.
     *
     * @param ref         the buffer
     * @param peer        the owner process
     * @param incarnation the token's incarnation bytes, decoded once; never modified
     * @param accessKey   the token's key, copied once; never modified
     */
    record Staged(RemoteBufferRef ref, ShmPeer peer, byte[] incarnation, byte[] accessKey) implements ShmRemote {
        Staged(RemoteBufferRef ref, ShmPeer peer) {
            this(ref, peer, java.util.HexFormat.of().parseHex(ref.incarnation()), ref.accessKey());
        }
    }
}
