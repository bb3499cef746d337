package io.rdma4j.transport.ibverbs.ffi;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Test support for the soft-RoCE suite: two reliable-connected queue pairs connected to each
 * other, side A on one device and side B on another (or the same) device, each side with its own
 * context, protection domain and completion queue, as two processes would have. Closing the pair
 * closes both contexts, which frees everything created from them.
 */
final class RcPair implements AutoCloseable {

    static final int PORT = 1;
    static final int ACCESS = Ibv.IBV_ACCESS_LOCAL_WRITE | Ibv.IBV_ACCESS_REMOTE_WRITE | Ibv.IBV_ACCESS_REMOTE_READ;
    static final Duration DEADLINE = Duration.ofSeconds(120);

    final Side a;
    final Side b;

    /** One end: its device context, domain, completion queue and queue pair. */
    static final class Side {
        final VerbsContext context;
        final ProtectionDomain pd;
        final CompletionChannel channel;
        final CompletionQueue cq;
        final QueuePair qp;
        final int gidIndex;
        final Gid gid;
        final PortAttributes port;
        final DeviceAttributes device;

        Side(String deviceName, int depth, boolean withChannel) {
            this(deviceName, depth, withChannel, 0);
        }

        Side(String deviceName, int depth, boolean withChannel, int maxInlineData) {
            context = VerbsContext.open(deviceName);
            try {
                device = context.queryDevice();
                port = context.queryPort(PORT);
                gidIndex = ipv4MappedGidIndex(context, port);
                gid = context.queryGid(PORT, gidIndex);
                pd = context.allocateProtectionDomain();
                channel = withChannel ? context.createCompletionChannel() : null;
                cq = context.createCompletionQueue(depth, channel);
                qp = pd.createReliableConnectedQueuePair(new QueuePairInit(cq, cq, depth, 4, 2, 2, maxInlineData));
            } catch (RuntimeException e) {
                context.close();
                throw e;
            }
        }
    }

    private RcPair(Side a, Side b) {
        this.a = a;
        this.b = b;
    }

    /** Opens both sides and takes both queue pairs to RTS, connected to each other. */
    static RcPair connect(String deviceA, String deviceB, int depth) {
        return connect(deviceA, deviceB, depth, false);
    }

    /** As {@link #connect(String, String, int)}, each completion queue on a completion channel if asked. */
    static RcPair connect(String deviceA, String deviceB, int depth, boolean withChannels) {
        return connect(deviceA, deviceB, depth, withChannels, 0);
    }

    /** As {@link #connect(String, String, int, boolean)}, each queue pair asking for {@code maxInlineData} bytes inline. */
    static RcPair connect(String deviceA, String deviceB, int depth, boolean withChannels, int maxInlineData) {
        Side a = new Side(deviceA, depth, withChannels, maxInlineData);
        Side b;
        try {
            b = new Side(deviceB, depth, withChannels, maxInlineData);
        } catch (RuntimeException e) {
            a.context.close();
            throw e;
        }
        RcPair pair = new RcPair(a, b);
        try {
            link(a, b, 0x1000, 0x2000);
            link(b, a, 0x2000, 0x1000);
        } catch (RuntimeException e) {
            pair.close();
            throw e;
        }
        return pair;
    }

    /** RESET -> INIT -> RTR -> RTS for {@code self}, aimed at {@code peer}, which sends from {@code peerPsn}. */
    private static void link(Side self, Side peer, int selfPsn, int peerPsn) {
        int mtu = Math.min(self.port.activeMtu(), peer.port.activeMtu());
        self.qp.modifyToInit(PORT, 0, ACCESS);
        self.qp.modifyToReadyToReceive(new ReadyToReceive(mtu, peer.qp.number(), peerPsn,
                Math.min(16, self.device.maxQpRdAtom()), 12, PORT, peer.port.lid(), peer.gid, self.gidIndex, 64));
        self.qp.modifyToReadyToSend(new ReadyToSend(selfPsn, 14, 7, 7, Math.min(16, self.device.maxQpInitRdAtom())));
    }

    /** The first index in the port's GID table holding an IPv4-mapped address (RoCE v2 over IPv4). */
    static int ipv4MappedGidIndex(VerbsContext context, PortAttributes port) {
        for (int i = 0; i < port.gidTableLength(); i++) {
            Gid gid = context.queryGid(PORT, i);
            if (gid.isIpv4Mapped()) {
                return i;
            }
        }
        throw new AssertionError(context.deviceName() + " has no IPv4-mapped GID on port " + PORT);
    }

    /**
     * Polls {@code cq} until {@code count} completions arrived, into {@code wcs}; returns how many
     * failed. Fails the test when the deadline passes (an op that hangs is a failure, not a wait).
     */
    static int await(CompletionQueue cq, WorkCompletions wcs, int count, int[] statusesOrNull) {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        int seen = 0;
        int failed = 0;
        while (seen < count) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (wcs.status(i) != Ibv.IBV_WC_SUCCESS) {
                    failed++;
                }
                if (statusesOrNull != null && seen + i < statusesOrNull.length) {
                    statusesOrNull[seen + i] = wcs.status(i);
                }
            }
            seen += n;
            if (n == 0 && System.nanoTime() - deadline > 0) {
                fail("only " + seen + " of " + count + " completions within " + DEADLINE);
            }
        }
        return failed;
    }

    @Override
    public void close() {
        try {
            a.context.close();
        } finally {
            b.context.close();
        }
    }
}
