package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.MemoryFile;
import io.rdma4j.transport.shm.ffi.UnixSockets;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RegistrationLookup;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.util.List;

/**
 * The owner's staging channels: opens one per STAGE request (a staging file handed over and a
 * {@link StagingServer} thread), at most {@value #MAX_STAGING_CHANNELS} at once, and closes them
 * all with the transport. Used where same-user holders may not cross-memory attach to this
 * process ({@link ShmTransport}, "Permission").
 *
 * <p>Thread-safe: {@link #open} runs on the hand-over thread, the rest on the transport's
 * closing thread or the servers' own.
 */
final class StagingServers {

    /** Slots of a staging file: pieces one holder's op keeps in flight. */
    static final int STAGING_SLOTS = 4;
    /** Bytes of one staging slot: the largest piece of a staged copy. */
    static final long STAGING_SLOT_BYTES = 1 << 20;
    /** Most staging channels this owner serves at once, all holders together (each is a thread and a file). */
    static final int MAX_STAGING_CHANNELS = 64;

    private final RegistrationLookup registrations;
    /** The staging channels this owner serves; its monitor guards it and {@link #closed}. */
    private final java.util.Set<StagingServer> stagingServers = new java.util.HashSet<>();
    /** Set when the transport closes: no channel is opened any more. */
    private boolean closed;

    StagingServers(RegistrationLookup registrations) {
        this.registrations = registrations;
    }

    /**
     * The owner's answer to a STAGE request, on the hand-over thread, to a process of this user:
     * a new staging file ({@value #STAGING_SLOTS} slots of {@value #STAGING_SLOT_BYTES} bytes,
     * sealed against resizing), handed over, and a {@link StagingServer} thread that takes the
     * connection over once the answer went out. No key is checked here: every request on the
     * channel carries its own, checked as a TCP request's is.
     */
    Handover.Answer open(UnixSockets.Credentials peer) {
        synchronized (stagingServers) {
            if (closed) {
                return new Handover.Answer(ShmProtocol.refused(ErrorCode.FAILED.wire(), "shm: the owner is closing"));
            }
            if (stagingServers.size() >= MAX_STAGING_CHANNELS) {
                return new Handover.Answer(ShmProtocol.refused(ErrorCode.FAILED.wire(), "shm: the owner already serves "
                        + MAX_STAGING_CHANNELS + " staging channels"));
            }
        }
        Arena arena = Arena.ofShared();
        int fd;
        MemoryFile.Mapped file;
        try {
            file = MemoryFile.create("rdma4j-shm-staging", STAGING_SLOTS * STAGING_SLOT_BYTES, arena, m -> { });
            fd = file.parked().take();
        } catch (IOException | RuntimeException e) {
            arena.close();
            return new Handover.Answer(ShmProtocol.refused(ErrorCode.FAILED.wire(), "shm: cannot create a staging file: "
                    + e.getMessage()));
        }
        byte[] reply = ShmProtocol.staged(new ShmProtocol.Staged(STAGING_SLOTS, STAGING_SLOT_BYTES));
        return new Handover.Answer(reply, new int[] {fd}, new Handover.Continuation() {
            @Override
            public void take(int connection) {
                StagingServer[] self = new StagingServer[1];
                StagingServer server = new StagingServer(connection, arena, file.segment(), STAGING_SLOTS,
                        STAGING_SLOT_BYTES, registrations, peer.pid(), () -> {
                            synchronized (stagingServers) {
                                stagingServers.remove(self[0]);
                            }
                        });
                self[0] = server;
                synchronized (stagingServers) {
                    if (!closed) {
                        stagingServers.add(server);
                        server.start();
                        return;
                    }
                }
                server.discard();
            }

            @Override
            public void abandon() {
                arena.close();
            }
        });
    }

    /** The transport is closing: no channel is opened from now on. */
    void refuseNew() {
        synchronized (stagingServers) {
            closed = true;
        }
    }

    /** Closes every channel served: holders' channels end (they see the end of the stream). */
    void closeAll() {
        List<StagingServer> servers;
        synchronized (stagingServers) {
            servers = List.copyOf(stagingServers);
        }
        servers.forEach(StagingServer::close);
    }
}
