package io.rdma4j.transport.ibverbs.queuepair;

import io.rdma4j.transport.ibverbs.VerbsTuning;
import io.rdma4j.transport.ibverbs.VerbsWire;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;
import io.rdma4j.transport.ibverbs.ffi.QueuePairInit;
import io.rdma4j.transport.ibverbs.ffi.ReadyToReceive;
import io.rdma4j.transport.ibverbs.ffi.ReadyToSend;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * What the holder side ({@link HolderQueuePairs}) and the owner side ({@link OwnerQueuePairs}) of one
 * transport share: the close of their queue pairs, and how a queue pair is created and connected.
 *
 * <p><b>Close.</b> Every step that touches a device (creating, connecting or destroying a queue
 * pair) runs under the read side of one lock ({@link #enterDeviceStep}, {@link #leaveDeviceStep});
 * {@link #close} takes the write
 * side, so it waits for those steps and they never start after it: a handshake whose reply comes
 * after close finds its queue pair destroyed by close and touches nothing native. Close destroys
 * every queue pair of both sides exactly once (each side registers how, {@link #onClose}), before
 * the devices close.
 *
 * <p>Thread-safe.
 */
public final class QueuePairLifecycle implements AutoCloseable {

    /** The access flags of every queue pair: local write, remote write, remote read. */
    public static final int QP_ACCESS = Ibv.IBV_ACCESS_LOCAL_WRITE | Ibv.IBV_ACCESS_REMOTE_WRITE | Ibv.IBV_ACCESS_REMOTE_READ;
    private static final System.Logger LOG = System.getLogger(QueuePairLifecycle.class.getName());

    /** Read side: a step that touches a device; write side: {@link #close}. */
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    /** How each side destroys its queue pairs, in registration order (the holder side first). */
    private final List<Runnable> destroyers = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /** Registers how one side destroys every queue pair it keeps; run once, by {@link #close}, under the write side. */
    void onClose(Runnable destroyEverything) {
        destroyers.add(destroyEverything);
    }

    /**
     * Takes the read side for a step that touches a device: close waits for it, and it sees
     * {@link #isClosed} as close left it. Always paired with {@link #leaveDeviceStep} in a
     * {@code finally}.
     */
    void enterDeviceStep() {
        lock.readLock().lock();
    }

    /** Lets go of the read side taken by {@link #enterDeviceStep}. */
    void leaveDeviceStep() {
        lock.readLock().unlock();
    }

    boolean isClosed() {
        return closed;
    }

    void requireOpen() {
        if (closed) {
            throw new IllegalStateException("the ibverbs transport is closed");
        }
    }

    /**
     * Destroys every queue pair, the holder side's, the owner side's and those mid-handshake
     * (before the devices close), after the device steps under way finished; later ones see the
     * transport closed. Idempotent.
     */
    @Override
    public void close() {
        lock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            for (Runnable destroy : destroyers) {
                destroy.run();
            }
        } finally {
            lock.writeLock().unlock();
        }
    }

    /**
     * A new RC queue pair on {@code device}, with {@code tuning}'s depth, SGEs and inline data. A
     * device that refuses that much inline data gives one without (INFO line): writes then go
     * without {@code IBV_SEND_INLINE}.
     */
    static QueuePair newQueuePair(VerbsDevice device, VerbsTuning tuning) {
        if (tuning.maxInlineData() > 0) {
            try {
                return device.pd.createReliableConnectedQueuePair(new QueuePairInit(device.cq, device.cq, tuning.queueDepth(), 1,
                        tuning.maxSge(), 1, tuning.maxInlineData()));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.INFO, "device {0} refused a queue pair with {1} bytes of inline data ({2}): "
                        + "creating one without", device.name, tuning.maxInlineData(), e.getMessage());
            }
        }
        return device.pd.createReliableConnectedQueuePair(new QueuePairInit(device.cq, device.cq, tuning.queueDepth(), 1,
                tuning.maxSge(), 1));
    }

    /**
     * INIT -> RTR -> RTS towards {@code remote}; {@code psn} is this side's first send PSN. Transport
     * retries: 6 (soft-RoCE treats 7 as "retry forever", so a dead peer's work requests would then
     * never complete and only the op's deadline would end them), ACK timeout about 67 ms.
     */
    static void connect(VerbsDevice device, QueuePair qp, VerbsWire.Endpoint remote, int psn) {
        int mtu = Math.min(device.port.activeMtu(), remote.mtu());
        qp.modifyToReadyToReceive(new ReadyToReceive(mtu, remote.qpNumber(), remote.psn(),
                Math.min(16, device.attributes.maxQpRdAtom()), 12, VerbsDevice.PORT, remote.lid(), remote.gid(),
                device.gidIndex, 64));
        qp.modifyToReadyToSend(new ReadyToSend(psn, 14, 6, 7, Math.min(16, device.attributes.maxQpInitRdAtom())));
    }

    static void closeQuietly(QueuePair qp) {
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "destroying queue pair {0} failed: {1}", qp, e.getMessage());
        }
    }
}
