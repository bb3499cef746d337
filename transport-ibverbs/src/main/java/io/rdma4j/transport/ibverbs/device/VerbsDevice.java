package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.ffi.CompletionChannel;
import io.rdma4j.transport.ibverbs.ffi.CompletionQueue;
import io.rdma4j.transport.ibverbs.ffi.DeviceAttributes;
import io.rdma4j.transport.ibverbs.ffi.Gid;
import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.PortAttributes;
import io.rdma4j.transport.ibverbs.ffi.ProtectionDomain;
import io.rdma4j.transport.ibverbs.ffi.VerbsContext;
import io.rdma4j.transport.ibverbs.ffi.Wakeup;
import io.rdma4j.transport.ibverbs.ffi.WorkCompletions;
import io.rdma4j.transport.ibverbs.posting.Chunk;
import io.rdma4j.transport.ibverbs.posting.VerbsConnection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One opened RDMA device as the transport uses it: its context, one protection domain, one
 * completion channel and one completion queue shared by all its queue pairs, and the one poller
 * thread that serves that queue. The poller spins on an empty queue until its poll window
 * ({@link PollWindow}: the busy-poll time, or longer for a device whose ops typically take longer)
 * has passed since any thread last took a completion, then arms the queue and
 * sleeps on the completion channel without a timeout, so an idle device costs no CPU; {@link
 * #close} wakes it through a {@link Wakeup}. A thread waiting for its own ops may poll the queue
 * too ({@link #pollOnce}): it then needs no wakeup, and while such ops keep coming the poller keeps
 * spinning instead of arming the queue, so they raise no completion events either.
 *
 * <p>Thread-safe: one thread at a time takes completions off the queue (under a lock), and
 * delivers them after letting go of it. {@link #close} stops the poller, waits for a caller's
 * poll in progress, then closes the context, which frees every queue pair, memory region and
 * queue created from it.
 */
public final class VerbsDevice implements AutoCloseable {

    /** The port every queue pair uses. */
    public static final int PORT = 1;
    /** Completions taken per {@code ibv_poll_cq} (each may stand for up to {@code rdma.ibverbs.signalEvery} work requests). */
    static final int POLL_BATCH = 64;
    /** How long a thread that stops a submission from outside sleeps between two polls that took nothing. */
    public static final long REST_NANOS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final System.Logger LOG = System.getLogger(VerbsDevice.class.getName());

    final VerbsContext context;
    public final String name;
    public final ProtectionDomain pd;
    public final PortAttributes port;
    public final DeviceAttributes attributes;
    public final int gidIndex;
    public final Gid gid;
    public final CompletionQueue cq;
    private final CompletionChannel channel;
    /** How long the poller spins on an empty queue after the last completion; a waiting thread polls it as long. */
    public final PollWindow pollWindow;
    /** Posted chunks by work request id, until their completion (or close) takes them. */
    private final WorkRequestTable inFlight;
    /** Completion-queue entries not promised to a posted work request: posting never overflows the queue. */
    private final AtomicInteger cqRoom;
    /** Connections that found no room in the completion queue; the poller wakes them as completions free some. */
    private final ConcurrentLinkedQueue<VerbsConnection> starved = new ConcurrentLinkedQueue<>();
    private final Thread poller;
    private volatile boolean closing;
    /** Held while a thread takes completions off the queue into {@link #polled}; close() takes it after {@link #closing}. */
    private final ReentrantLock pollLock = new ReentrantLock();
    /** Where {@code ibv_poll_cq} writes; guarded by {@link #pollLock}, freed by close(). */
    private final WorkCompletions polled;
    /** Whether a waiting caller polls this queue ({@link #claimWaiterPolling}); one at a time. */
    private final AtomicBoolean waiterPolling = new AtomicBoolean();
    /**
     * Whether that caller is delivering completions, and so maybe running user callbacks that
     * wait for other ops (which it cannot poll for meanwhile): the poller does not rest then.
     */
    private volatile boolean waiterDelivering;
    /** The batches of completions each thread is delivering: a poll nested in a delivery delivers the rest of them first. */
    private final Deliveries deliveries = new Deliveries();
    /**
     * When a thread last took completions off the queue ({@link System#nanoTime}); the poller spins
     * for the poll window ({@link PollWindow}) after it.
     */
    private volatile long lastCompletion = System.nanoTime();
    /** Work completions taken off the queue so far, by the poller and by waiting callers. */
    private final AtomicLong completions = new AtomicLong();
    /** {@code ibv_post_send} calls that posted work requests to this device's queue pairs so far. */
    private final AtomicLong posts = new AtomicLong();
    /** Where a poll puts the chunks a completion stands for ({@link VerbsConnection#takeSent}); guarded by {@link #pollLock}. */
    private final List<Chunk> before = new ArrayList<>();
    /** Times the poller came back from sleeping on the completion channel; written by the poller only. */
    private volatile long wakeups;
    /** Whether the poller sleeps on the completion channel (or is about to). */
    private volatile boolean parked;
    /**
     * Whether the poller rests while a waiting caller polls (or is about to): it sleeps without a
     * timeout, and that caller wakes it when it stops polling or starts delivering what it took
     * (a delivery may run a dependent stage that waits for other ops). It slept 50 us at a time
     * before, and woke 532 times in one caller's action of 512 writes of 64 KiB in the soft-RoCE VM
     * (4 completions; VerbsBatchVmTest).
     */
    private volatile boolean resting;
    /** Times the poller came back from resting while a waiting caller polled; written by the poller only. */
    private volatile long restWakeups;
    /**
     * Times a waiting caller stopped polling this queue before its ops were done (its poll window
     * passed without a completion); written by the one caller that claimed the queue.
     */
    private volatile long waiterPollsEnded;
    /** When completions were last taken off the queue; guarded by {@link #pollLock}. */
    private long lastTake;
    /** Whether work was still in flight after that take: the next take's gap is then a busy device's ({@link PollWindow#observeGap}); guarded by {@link #pollLock}. */
    private boolean busyAfterLastTake;
    private final Wakeup wakeup;

    private VerbsDevice(VerbsContext context, PortAttributes port, int cqEntries, long busyPollNanos) {
        this.context = context;
        this.name = context.deviceName();
        this.port = port;
        this.pollWindow = new PollWindow(busyPollNanos);
        this.attributes = context.queryDevice();
        this.gidIndex = DeviceOpening.gidIndex(context, port);
        this.gid = context.queryGid(PORT, gidIndex);
        this.pd = context.allocateProtectionDomain();
        this.channel = context.createCompletionChannel();
        this.cq = context.createCompletionQueue(Math.min(cqEntries, attributes.maxCqe()), channel);
        this.cqRoom = new AtomicInteger(cq.entries());
        this.inFlight = new WorkRequestTable(cq.entries());
        this.polled = WorkCompletions.allocate(POLL_BATCH);
        this.wakeup = Wakeup.create();        // last: a failure above leaves nothing but what closing the context frees
        this.poller = Thread.ofPlatform().daemon().name("rdma4j-verbs-poller-" + name).unstarted(this::poll);
    }

    /** Opens the chosen device and starts its poller; on failure closes the context. */
    static VerbsDevice open(DeviceChoice.Candidate chosen, int cqEntries, long busyPollNanos) {
        VerbsContext context = VerbsContext.open(chosen.name());
        VerbsDevice device;
        try {
            device = new VerbsDevice(context, chosen.port(), cqEntries, busyPollNanos);
        } catch (RuntimeException e) {
            context.close();
            throw e;
        }
        device.poller.start();
        return device;
    }

    /** The largest message one work request may move here, capped so that its length fits an SGE. */
    public long maxMessageBytes() {
        long m = port.maxMessageSize();
        return m <= 0 ? 1L << 30 : Math.min(m, 1L << 30);
    }

    /** Takes one completion-queue entry for a work request about to be posted; false when the queue is fully promised. */
    public boolean reserveCompletion() {
        return reserveCompletions(1) == 1;
    }

    /**
     * Takes up to {@code wanted} completion-queue entries at once, for work requests about to be
     * posted (one atomic update for a chain's worth).
     *
     * @return how many it took, from 0 (the queue is fully promised) to {@code wanted}
     */
    public int reserveCompletions(int wanted) {
        for (int room = cqRoom.get(); room > 0 && wanted > 0; room = cqRoom.get()) {
            int take = Math.min(room, wanted);
            if (cqRoom.compareAndSet(room, room - take)) {
                return take;
            }
        }
        return 0;
    }

    /** Gives back the entry of a work request that completed, or whose post failed. */
    public void releaseCompletion() {
        cqRoom.incrementAndGet();
    }

    /** Gives back {@code n} entries at once ({@link #releaseCompletion} n times). */
    public void releaseCompletions(int n) {
        if (n > 0) {
            cqRoom.addAndGet(n);
        }
    }

    /** {@code c} waits for completion-queue room; the poller calls {@link VerbsConnection#resume} once some frees up. */
    public void starved(VerbsConnection c) {
        starved.add(c);
    }

    /** Registers {@code chunk} as in flight under a new work request id, which it sets in the chunk and returns. */
    public long track(Chunk chunk) {
        return inFlight.add(chunk);
    }

    /**
     * Forgets a chunk that was not posted.
     *
     * @return false when it was no longer tracked: the device's close already failed it ({@link #close})
     */
    public boolean untrack(long id) {
        return inFlight.take(id) != null;
    }

    private void poll() {
        try {
            while (!closing) {
                if (waiterPolling.get() && !waiterDelivering) {     // the caller takes every completion meanwhile
                    resting = true;
                    if (waiterPolling.get() && !waiterDelivering && !closing) {     // read after resting was set: else the caller unparks
                        LockSupport.park(this);     // until the caller stops polling or delivers (wakeResting), or close()
                    }
                    resting = false;
                    restWakeups++;
                    continue;
                }
                if (pollOnce(true) > 0) {
                    continue;
                }
                if (System.nanoTime() - lastCompletion < pollWindow.nanos()) {    // taken by anyone, waiters too
                    Thread.onSpinWait();
                    continue;
                }
                if (closing) {
                    break;
                }
                cq.requestNotification(false);
                if (pollOnce(true) > 0) {      // a completion that came before the arming raises no event
                    continue;
                }
                parked = true;
                channel.awaitEvent(-1, wakeup);     // no timeout: a completion or close() ends it
                parked = false;
                wakeups++;
                lastCompletion = System.nanoTime();     // spin a while: a waiting caller may have taken the completion
            }
        } catch (RuntimeException | Error e) {
            if (!closing) {
                LOG.log(System.Logger.Level.ERROR, "completion poller of " + name + " failed; ops on it fail", e);
                failAll("the completion poller of " + name + " failed: " + e);
            }
        }
    }

    /** Claims the one place of a waiting caller that polls this queue; false when another waiting caller holds it. */
    public boolean claimWaiterPolling() {
        return !waiterPolling.get() && waiterPolling.compareAndSet(false, true);
    }

    /** The waiting caller that claimed this queue stops polling it before its ops are done: its poll window passed. */
    public void waiterPollEnded() {
        waiterPollsEnded++;     // one claimer at a time
    }

    /**
     * Times a waiting caller stopped polling this queue before its ops were done, and slept until
     * the poller completed them: at most once per wait (for tests and diagnostics).
     */
    public long waiterPollsEnded() {
        return waiterPollsEnded;
    }

    /** Gives back the place {@link #claimWaiterPolling} claimed, and wakes the poller if it rests meanwhile. */
    public void releaseWaiterPolling() {
        waiterPolling.set(false);
        wakeResting();
    }

    /** Wakes the poller when it rests while a waiting caller polls (it looks again, and polls when that caller no longer does). */
    private void wakeResting() {
        if (resting) {
            LockSupport.unpark(poller);
        }
    }

    /**
     * Times the poller came back from resting while a waiting caller polled the queue: about once
     * per stretch of such polling and per delivery of that caller, not per unit of time (for tests).
     */
    public long restWakeups() {
        return restWakeups;
    }

    /**
     * Takes up to {@link #POLL_BATCH} completions off the queue and delivers them on the calling
     * thread: their chunks complete, with the unsignalled chunks posted before them on their queue
     * pairs that they stand for (in the order they were taken, under the poll lock: see {@link
     * VerbsConnection}), their connections post what waits, and connections starved of
     * completion-queue room resume. The poller calls it, and so may a thread waiting for its own
     * ops, which then needs no wakeup.
     *
     * @param wait true for the poller, which waits while another thread polls; false for the one
     *             waiting caller that claimed the queue ({@link #claimWaiterPolling}), which leaves
     *             the completions to a thread already polling
     * @return completions taken (or, of batches taken further up this thread's stack, chunks
     *         delivered); 0 when none waited, another thread was polling, or the device is closing
     */
    public int pollOnce(boolean wait) {
        int rest = deliveries.deliverRestOfBatches();
        if (rest > 0) {
            return rest;
        }
        CompletionBatch taken;
        int n;
        long now;
        if (wait) {
            pollLock.lock();
        } else if (!pollLock.tryLock()) {
            return 0;
        }
        try {
            if (closing) {
                return 0;
            }
            n = cq.poll(polled);
            if (n == 0) {
                return 0;
            }
            now = System.nanoTime();
            if (busyAfterLastTake) {
                pollWindow.observeGap(now - lastTake);
            }
            taken = resolve(n);     // delivery runs unlocked and may poll again (nested waits)
            lastTake = now;
            busyAfterLastTake = inFlight.size() > 0;
        } finally {
            pollLock.unlock();
        }
        lastCompletion = now;
        if (!wait) {
            waiterDelivering = true;
            wakeResting();      // delivery may run a dependent stage that waits for other ops, which this thread cannot poll for meanwhile
        }
        try {
            completions.addAndGet(n);
            deliveries.deliver(taken);
            resumeStarved();
        } finally {
            if (!wait) {
                waiterDelivering = false;
            }
        }
        return n;
    }

    /**
     * The chunks the {@code n} completions in {@link #polled} stand for, in order, each taken
     * from the table (those no longer in it were failed by close or their queue pair's destroy):
     * before each completion's own chunk, the chunks posted before it on its queue pair of which no
     * completion was taken, as done, or as flushed when the completion is a flush (see {@link
     * VerbsConnection}). Under the poll lock, so in the order the completions came.
     */
    private CompletionBatch resolve(int n) {
        CompletionBatch b = new CompletionBatch(n);
        for (int i = 0; i < n; i++) {
            Chunk c = inFlight.take(polled.workRequestId(i));
            if (c == null) {
                continue;
            }
            int status = polled.status(i);
            c.connection.takeSent(c, before);
            if (!before.isEmpty()) {
                int inferred = status == Ibv.IBV_WC_WR_FLUSH_ERR ? Ibv.IBV_WC_WR_FLUSH_ERR : Ibv.IBV_WC_SUCCESS;
                for (Chunk p : before) {
                    if (inFlight.take(p.workRequestId) == p) {
                        b.add(p, inferred, CompletionBatch.INFERRED);
                    }
                }
                before.clear();
            }
            b.add(c, status, polled.vendorError(i));
        }
        return b;
    }

    /** {@code ibv_post_send} calls that posted to this device's queue pairs so far (for tests and diagnostics). */
    public long posts() {
        return posts.get();
    }

    /** An {@code ibv_post_send} call to one of this device's queue pairs posted work requests. */
    public void posted() {
        posts.incrementAndGet();
    }

    /**
     * Times the poller woke from the completion channel so far: one per completion event (or
     * close). Stays still while the device is idle: the poller sleeps without a timeout.
     */
    public long wakeups() {
        return wakeups;
    }

    /** Whether the poller sleeps on the completion channel now (or is about to). */
    public boolean isParked() {
        return parked;
    }

    /** The poller thread's stack now (for tests: where it sleeps). */
    public StackTraceElement[] pollerStack() {
        return poller.getStackTrace();
    }

    /** Work completions taken off this device's queue so far (for tests and diagnostics). */
    public long completions() {
        return completions.get();
    }

    private void resumeStarved() {
        for (int i = starved.size(); i > 0; i--) {      // those starved again re-queue themselves
            VerbsConnection c = starved.poll();
            if (c == null) {
                return;
            }
            c.resume();
        }
    }

    /**
     * Accounts for the chunks of {@code c}, whose queue pair was just destroyed ({@link
     * VerbsConnection#destroyNow}): first takes what the completion queue holds (the completions
     * of its work requests that came before the destroy are there, or already taken by another
     * thread), then fails, as flushed, its chunks still tracked: no completion comes for them any
     * more, and the device touches none of their memory. The completion-queue room of each is given
     * back once, by whichever of this and a delivery in progress takes it from the table.
     */
    public void retireDestroyed(VerbsConnection c, String why) {
        while (pollOnce(true) == POLL_BATCH) {
            // a full batch: there may be more
        }
        List<Chunk> left = new ArrayList<>();
        inFlight.takeIf(chunk -> chunk.connection == c, left::add);
        for (Chunk chunk : left) {
            chunk.completed(Ibv.IBV_WC_WR_FLUSH_ERR, "not completed: its queue pair was destroyed (" + why + ")");
        }
    }

    private void failAll(String why) {
        List<Chunk> failed = new ArrayList<>();
        inFlight.takeAll(failed::add);      // first all, then fail them: failing one may track more (they fail when posted)
        for (Chunk c : failed) {
            c.completed(-1, why);
        }
    }

    /** Stops the poller (wakes it if parked), fails what is still in flight, closes the device. Idempotent. */
    @Override
    public void close() {
        if (closing) {
            return;
        }
        closing = true;
        wakeup.signal();
        LockSupport.unpark(poller);     // when it rests while a caller polls
        try {
            poller.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (poller.isAlive()) {
            LOG.log(System.Logger.Level.WARNING, "the completion poller of {0} did not stop within 5 s", name);
        } else {
            wakeup.close();
        }
        pollLock.lock();        // a caller's poll in progress ends first; later ones see closing
        try {
            polled.close();
            context.close();
        } finally {
            pollLock.unlock();
        }
        failAll("the ibverbs transport closed");
    }

    @Override
    public String toString() {
        return name;
    }
}
