package io.rdma4j.ibverbs;

import io.rdma4j.ibverbs.ffi.Ibv;
import io.rdma4j.ibverbs.ffi.QueuePair;
import io.rdma4j.ibverbs.ffi.SendWorkRequests;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One connected RC queue pair to a peer device, with its send-side flow control: at most
 * {@code depth} signalled work requests in flight; more wait in {@link #pending} and are posted as
 * completions free room (from the poller thread). Any failed completion moves the queue pair to
 * ERROR ({@link #breakDown}): what is still in flight then completes with flush errors, queued
 * chunks fail at once, and the transport opens a new connection for later ops. The queue pair is
 * destroyed once broken and drained, or with its device.
 *
 * <p>Thread-safe: posting and the counters are guarded by this object's lock; submissions are
 * told outside it.
 */
final class VerbsConnection {

    private static final System.Logger LOG = System.getLogger(VerbsConnection.class.getName());

    /** One work request's worth of an op: a contiguous local range and the remote range it maps to. */
    static final class Chunk {
        final VerbsSubmission submission;
        final int opIndex;
        final int opcode;
        final long localAddress;
        final int length;
        final int lkey;
        final long remoteAddress;
        final int rkey;
        VerbsConnection connection;

        Chunk(VerbsSubmission submission, int opIndex, int opcode, long localAddress, int length, int lkey,
              long remoteAddress, int rkey) {
            this.submission = submission;
            this.opIndex = opIndex;
            this.opcode = opcode;
            this.localAddress = localAddress;
            this.length = length;
            this.lkey = lkey;
            this.remoteAddress = remoteAddress;
            this.rkey = rkey;
        }

        /**
         * Called by the thread that took the completion (or on close) with its status; {@code
         * error} null on success. A flushed work request's error names why its queue pair left
         * service, when known: the flush is only the echo of that (another op's error, a cancel).
         */
        void completed(int status, String error) {
            String why = connection.brokenBecause;
            connection.retired(status != Ibv.IBV_WC_SUCCESS, error);
            if (status == Ibv.IBV_WC_WR_FLUSH_ERR && why != null) {
                error = error + "; the queue pair had left service: " + why;
            }
            submission.chunkDone(this, status, error);
        }
    }

    final VerbsDevice device;
    final String peer;
    private final QueuePair qp;
    private final SendWorkRequests request = SendWorkRequests.allocate(1, 1);
    private final ArrayDeque<Chunk> pending = new ArrayDeque<>();
    private int credits;
    private int inFlight;
    /** Why the queue pair left service, or null; written under this object's lock, read without it by {@link #isBroken}. */
    private volatile String brokenBecause;
    private boolean destroyed;
    private boolean starved;

    VerbsConnection(VerbsDevice device, QueuePair qp, String peer, int depth) {
        this.device = device;
        this.qp = qp;
        this.peer = peer;
        this.credits = Math.min(depth, qp.maxSendRequests());
    }

    /**
     * Whether the queue pair left service; the transport then replaces the connection. Takes no
     * lock: every op asks before it uses the connection, and must not queue behind a thread that
     * posts work requests under the lock.
     */
    boolean isBroken() {
        return brokenBecause != null;
    }

    /** Whether the queue pair was destroyed (broken and drained, or closed). */
    synchronized boolean isDestroyed() {
        return destroyed;
    }

    /** Queues {@code chunks} and posts as many as the queue depth allows. */
    void enqueue(List<Chunk> chunks) {
        List<Chunk> refused;
        synchronized (this) {
            for (Chunk c : chunks) {
                c.connection = this;
                pending.add(c);
            }
            refused = drainLocked();
        }
        refuse(refused);
    }

    /** Posts pending chunks while credits last; returns the chunks that must fail (broken or refused by the driver). */
    private List<Chunk> drainLocked() {
        List<Chunk> refused = null;
        while (!pending.isEmpty() && (credits > 0 || brokenBecause != null)) {
            Chunk c = pending.poll();
            if (brokenBecause != null || c.submission.isAborted()) {
                (refused == null ? refused = new ArrayList<>() : refused).add(c);
                continue;
            }
            if (!device.reserveCompletion()) {
                if (!starved) {
                    starved = true;
                    device.starved(this);       // then try again: room freed before we queued up wakes no one
                }
                if (!device.reserveCompletion()) {
                    pending.addFirst(c);
                    break;
                }
            }
            long id = device.track(c);
            request.setSge(0, 0, c.localAddress, c.length, c.lkey);
            request.setRdma(0, id, c.opcode, Ibv.IBV_SEND_SIGNALED, 1, c.remoteAddress, c.rkey);
            try {
                qp.postSend(request, 1);
                credits--;
                inFlight++;
            } catch (RuntimeException e) {
                device.untrack(id);
                device.releaseCompletion();
                breakLocked("ibv_post_send failed: " + e.getMessage());
                (refused == null ? refused = new ArrayList<>() : refused).add(c);
            }
        }
        return refused == null ? List.of() : refused;
    }

    private void refuse(List<Chunk> refused) {
        for (Chunk c : refused) {
            String why;
            synchronized (this) {
                why = brokenBecause;
            }
            c.submission.chunkDone(c, -1, why == null ? "not posted: the op was cancelled or timed out" : "not posted: the queue pair to "
                    + peer + " is out of service (" + why + ")");
        }
    }

    /** The device has completion-queue room again: posts what waits for it. */
    void resume() {
        List<Chunk> refused;
        synchronized (this) {
            starved = false;
            refused = drainLocked();
            destroyIfDrainedLocked();
        }
        refuse(refused);
    }

    /** A posted chunk completed: returns its credit, breaks the queue pair on failure, posts more. */
    void retired(boolean failed, String error) {
        device.releaseCompletion();
        List<Chunk> refused;
        synchronized (this) {
            credits++;
            inFlight--;
            if (failed && brokenBecause == null) {
                breakLocked(error);
            }
            refused = drainLocked();
            destroyIfDrainedLocked();
        }
        refuse(refused);
    }

    /**
     * Takes the queue pair out of service: moves it to ERROR so that every work request still in
     * flight completes (flushed) and the device touches none of their memory afterwards. Idempotent.
     */
    void breakDown(String why) {
        List<Chunk> refused;
        synchronized (this) {
            if (brokenBecause == null) {
                breakLocked(why);
            }
            refused = drainLocked();
            destroyIfDrainedLocked();
        }
        refuse(refused);
    }

    private void breakLocked(String why) {
        brokenBecause = why;
        LOG.log(System.Logger.Level.INFO, "{0} leaves service ({1} work requests in flight, {2} queued): {3}",
                this, inFlight, pending.size(), why);
        try {
            qp.modifyToError();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "moving queue pair {0} to {1} to ERROR failed: {2}", qp.number(), peer, e.getMessage());
        }
    }

    private void destroyIfDrainedLocked() {
        if (brokenBecause != null && inFlight == 0 && !destroyed) {
            destroyed = true;
            closeQuietly();
        }
    }

    /** Destroys the queue pair now (transport close: the device is closing too). */
    synchronized void close() {
        if (!destroyed) {
            destroyed = true;
            brokenBecause = brokenBecause == null ? "closed" : brokenBecause;
            closeQuietly();
        }
    }

    private void closeQuietly() {
        try {
            qp.close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "destroying queue pair {0} to {1} failed: {2}", qp.number(), peer, e.getMessage());
        }
        request.close();
    }

    @Override
    public String toString() {
        return "queue pair " + qp.number() + " on " + device + " to " + peer;
    }
}
