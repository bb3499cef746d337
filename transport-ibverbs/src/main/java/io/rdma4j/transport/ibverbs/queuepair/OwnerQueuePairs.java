package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.transport.ibverbs.VerbsTuning;
import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;
import io.rdma4j.transport.ibverbs.liveness.OwnerSweep;
import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.TransportContext;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;

/**
 * The owner side of the queue-pair handshake: answers a holder's handshake with a queue pair of
 * its own ({@link #accept}), and keeps one queue pair per slot of each holder ({@link
 * AcceptedQueuePairs}): a new handshake for a slot destroys the queue pair it replaces, a holder's
 * new incarnation on an endpoint those of its predecessor, and the liveness sweep ({@link
 * OwnerSweep}) those of a holder it found gone ({@link #retireGone}). It refuses a handshake
 * addressed to another incarnation than this manager's.
 *
 * <p>Close: see {@link QueuePairLifecycle}; this side's queue pairs are destroyed by its close.
 *
 * <p>Thread-safe.
 */
public final class OwnerQueuePairs {

    private static final System.Logger LOG = System.getLogger(OwnerQueuePairs.class.getName());

    private final VerbsTuning tuning;
    private final SecureRandom random = new SecureRandom();
    private final String incarnation;
    private final AcceptedQueuePairs<QueuePair> accepted;
    private final QueuePairLifecycle lifecycle;

    public OwnerQueuePairs(TransportContext context, VerbsTuning tuning, QueuePairLifecycle lifecycle) {
        this.tuning = tuning;
        this.incarnation = HexFormat.of().formatHex(context.incarnation());
        this.accepted = new AcceptedQueuePairs<>(context.clock());
        this.lifecycle = lifecycle;
        lifecycle.onClose(this::destroyAll);
    }

    /** Queue pairs this side connected on holders' request, in service now. */
    public int acceptedQueuePairs() {
        return accepted.size();
    }

    /** The holders this side keeps accepted queue pairs for that did not handshake within the last {@code quietNanos}. */
    public List<AcceptedQueuePairs.Holder> quietHolders(long quietNanos) {
        return accepted.quietHolders(quietNanos);
    }

    /** The holder at {@code endpoint} this side keeps accepted queue pairs for, or null. */
    public AcceptedQueuePairs.Holder holderAt(Endpoint endpoint) {
        return accepted.holderAt(endpoint);
    }

    /** Holders this side keeps accepted queue pairs for that answered a probe at their endpoint. */
    public int reachableHolders() {
        return accepted.reachableHolders();
    }

    /** {@code holder} answered a probe at its endpoint ({@link AcceptedQueuePairs#confirmReachable}). */
    public void confirmReachable(AcceptedQueuePairs.Holder holder) {
        accepted.confirmReachable(holder);
    }

    /**
     * Destroys the queue pairs of {@code gone}, a holder found gone ({@code why}), unless it or a
     * successor handshook since it was named, or it never answered at its endpoint
     * ({@link AcceptedQueuePairs#retireGone}), or this side closed (close destroyed them).
     */
    public void retireGone(AcceptedQueuePairs.Holder gone, String why) {
        lifecycle.enterDeviceStep();
        try {
            if (lifecycle.isClosed()) {
                return;
            }
            List<QueuePair> retired = accepted.retireGone(gone);
            if (!retired.isEmpty()) {
                LOG.log(System.Logger.Level.INFO, "holder manager incarnation {0} at {1} is gone ({2}): its {3} accepted "
                        + "queue pair(s) are destroyed", gone.incarnation(), gone.endpoint(), why, retired.size());
                destroyRetired(retired, "its holder is gone");
            }
        } finally {
            lifecycle.leaveDeviceStep();
        }
    }

    /** Destroys accepted queue pairs the books took out of service, under the read side of the lifecycle. */
    private static void destroyRetired(List<QueuePair> retired, String why) {
        for (QueuePair old : retired) {
            LOG.log(System.Logger.Level.DEBUG, "accepted queue pair {0} retired: {1}", old.number(), why);
            QueuePairLifecycle.closeQuietly(old);
        }
    }

    /**
     * Creates a queue pair on {@code device} connected to the one {@code request} describes, from
     * the manager at {@code holder}, and returns the reply to send. The queue pair serves the
     * request's slot until a new handshake for that slot, the holder's successor on its endpoint,
     * the sweep finding the holder gone, or close ({@link AcceptedQueuePairs}).
     *
     * @throws IllegalStateException if the transport is closed, or the request comes from a holder
     *                               incarnation already succeeded on its endpoint
     * @throws BufferAccessException (stale) if the request addresses another incarnation than this manager's
     */
    public byte[] accept(Endpoint holder, VerbsDevice device, VerbsWire.Handshake request) {
        VerbsWire.Endpoint remote = request.endpoint();
        AcceptedQueuePairs.Key key = new AcceptedQueuePairs.Key(request.fromIncarnation(), remote.device(),
                request.toIncarnation(), device.name, request.slot());
        if (!incarnation.equals(request.toIncarnation())) {
            throw new BufferAccessException(BufferAccessException.Reason.STALE, -1, "the handshake addresses manager incarnation "
                    + request.toIncarnation() + ", but this manager is incarnation " + incarnation
                    + ": that manager is gone from this endpoint (stale token)");
        }
        accepted.requireCurrent(holder, key.holderIncarnation());
        lifecycle.enterDeviceStep();
        try {
            lifecycle.requireOpen();
            QueuePair qp = QueuePairLifecycle.newQueuePair(device, tuning);
            int psn = random.nextInt(1 << 24);
            List<QueuePair> retired;
            try {
                qp.modifyToInit(VerbsDevice.PORT, 0, QueuePairLifecycle.QP_ACCESS);
                QueuePairLifecycle.connect(device, qp, remote, psn);
                retired = accepted.put(holder, key, qp);
            } catch (RuntimeException e) {
                QueuePairLifecycle.closeQuietly(qp);
                throw e;
            }
            if (!retired.isEmpty()) {
                destroyRetired(retired, "replaced by " + key + " on " + device.name);
            }
            return new VerbsWire.Handshake(incarnation, request.fromIncarnation(), remote.device(), request.slot(),
                    new VerbsWire.Endpoint(device.name, qp.number(), psn, device.gid, device.port.lid(), device.port.activeMtu()))
                    .encode();
        } finally {
            lifecycle.leaveDeviceStep();
        }
    }

    /** Under the write side of the lifecycle, once. */
    private void destroyAll() {
        for (QueuePair qp : accepted.clear()) {
            QueuePairLifecycle.closeQuietly(qp);
        }
    }

    @Override
    public String toString() {
        return accepted.size() + " accepted queue pairs";
    }
}
