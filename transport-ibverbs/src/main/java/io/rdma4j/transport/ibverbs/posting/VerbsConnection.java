package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.transport.ibverbs.ffi.QueuePair;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One connected RC queue pair to a peer device, with its send-side flow control: at most
 * {@code depth} work requests in flight (each holds a send-queue slot and a completion-queue
 * entry until it is retired); more wait in {@link #pending} and are posted as completions free
 * room (from the poller thread). Any failed completion moves the queue pair to
 * ERROR ({@link #breakDown}): what is still in flight then completes with flush errors, queued
 * chunks fail at once, and the transport opens a new connection for later ops. When the queue pair
 * left service for another submission's cancel or timeout ({@link #breakDown(String,
 * VerbsSubmission)}), the other submissions' flushed and queued chunks are posted again on a
 * replacement instead ({@link VerbsSubmission#collateral}). The queue pair is destroyed once
 * broken and drained, with its device, or at once when a flush does not come ({@link #destroyNow}).
 *
 * <p><b>Chains and selective signalling</b> ({@link SendChains}). The chunks claimed together
 * are posted as one chain of work requests, of which only some ask for a completion. An RC send
 * queue completes in order, so the completion of a signalled work request stands for every work
 * request posted before it here that has not completed yet: the device hands them over in that
 * order ({@link #takeSent}), and they are retired (their slots and entries freed) with it.
 *
 * <p><b>Errors with unsignalled work requests.</b> A work request that fails produces a completion
 * whether it was signalled or not (the verbs rule; soft-RoCE and ConnectX follow it), and so does
 * each one flushed after it once the queue pair is in ERROR. So: unsignalled work requests ahead of
 * a successful completion, or of a real error (not a flush), succeeded: had one failed, its own
 * completion would have come first, and this one would be flushed. Those ahead of a flush of which
 * no completion of their own came may have been done before the queue pair left service, or not:
 * they count as flushed (their ops fail, or are posted again when another submission's abort
 * flushed them; an RDMA READ or WRITE of unchanged memory can be repeated). An op is thus never
 * reported done when it was not; one reported failed after a flush may have been done. The first
 * real error of a submission is always its own completion.
 *
 * <p>Thread-safe, with three locks. This object's lock guards the books: what waits, credits, what
 * is in flight, and whether the queue pair left service. A chunk is claimed under it (a credit, a
 * completion-queue entry and a work request id), then posted in a {@link PostingTurn}, which
 * only serialises {@code ibv_post_send} and the work requests it reuses, and never makes a
 * thread wait for another one inside {@code ibv_post_send} (which on soft-RoCE carries the whole
 * round trip): the thread posting posts what others hand over. So the completion is delivered
 * while the poster is still in the call. A thread may take the turn while holding this object's
 * lock (to destroy the queue pair), never the other way round. The lock of what was sent
 * ({@link SendChains#takeSent}) is taken last and alone. Submissions are told outside them.
 */
public final class VerbsConnection {

    private static final System.Logger LOG = System.getLogger(VerbsConnection.class.getName());

    final VerbsDevice device;
    final String peer;
    private final QueuePair qp;
    /** Serialises {@code ibv_post_send} on the queue pair and the use of {@link #chains}. */
    private final PostingTurn<Chunk> posting = new PostingTurn<>(new PostingTurn.Poster<>() {
        @Override
        public PostingTurn.Failed<Chunk> post(List<Chunk> chunks) {
            return chains.post(chunks);
        }

        @Override
        public void roundFailed(List<Chunk> chunks, String failure) {
            List<Chunk> unposted = chunks.stream().filter(c -> c.workRequestId == 0).toList();
            if (!unposted.isEmpty()) {
                notPosted(unposted, failure);
            }
            if (failure.startsWith(SendChains.DANGLING)) {
                destroyNow(failure);    // what was posted of the chain may never report: the device stops touching it now
            }
        }
    });
    /** The chains of work requests posted here, and what was sent and not yet completed; posted in {@link #posting}'s turn only. */
    private final SendChains chains;
    private final ArrayDeque<Chunk> pending = new ArrayDeque<>();
    private int credits;
    private int inFlight;
    /** Whether the queue pair left service because its peer is gone ({@link #breakDownPeerGone}). Written before {@link #brokenBecause}. */
    private volatile boolean peerGone;
    /** Why the queue pair left service, or null; written under this object's lock, read without it by {@link #isBroken}. */
    private volatile String brokenBecause;
    /**
     * The submission whose abort (cancel, timeout) took the queue pair out of service, or null
     * (an error, the liveness sweep, close): the other submissions' chunks are then posted again
     * elsewhere ({@link VerbsSubmission#collateral}). Written before {@link #brokenBecause}.
     */
    private volatile VerbsSubmission brokenFor;
    private boolean destroyed;
    private boolean starved;

    /**
     * @param depth       work requests in flight at most (lowered to the queue pair's send queue)
     * @param signalEvery one work request in this many posted in a row asks for a completion, at least 1
     */
    public VerbsConnection(VerbsDevice device, QueuePair qp, String peer, int depth, int signalEvery) {
        this.device = device;
        this.qp = qp;
        this.peer = peer;
        this.credits = Math.max(1, Math.min(depth, qp.maxSendRequests()));
        this.chains = new SendChains(this, qp, credits, signalEvery);
    }

    /**
     * Whether the queue pair left service; the transport then replaces the connection. Takes no
     * lock: every op asks before it uses the connection, and must not queue behind a thread that
     * posts work requests under the lock.
     */
    public boolean isBroken() {
        return brokenBecause != null;
    }

    /** Why the queue pair left service, or null. */
    String brokenBecause() {
        return brokenBecause;
    }

    /** The submission whose abort took the queue pair out of service, or null ({@link #brokenFor}). */
    VerbsSubmission brokenFor() {
        return brokenFor;
    }

    /** Whether the queue pair left service because its peer is gone: what it flushed or refused failed for that. */
    boolean peerGone() {
        return peerGone;
    }

    /** Whether the queue pair was destroyed (broken and drained, or closed). */
    public synchronized boolean isDestroyed() {
        return destroyed;
    }

    /**
     * Posts {@code chunk} at once when nothing waits and a credit and a completion-queue entry are
     * free (the usual small op), or leaves it to the thread that is posting; else queues it as
     * {@link #enqueue(List)} does.
     */
    public void enqueue(Chunk chunk) {
        chunk.connection = this;
        Claimed claimed = null;
        boolean now;
        synchronized (this) {
            now = pending.isEmpty() && credits > 0 && brokenBecause == null && !chunk.submission.isAborted()
                    && device.reserveCompletion();
            if (now) {
                device.track(chunk);
                credits--;
                inFlight++;
            } else {
                pending.add(chunk);
                claimed = claimLocked(null);
            }
        }
        if (!now) {
            post(claimed);
            return;
        }
        posting.post(chunk);
    }

    /** Queues {@code chunks} and posts as many as the queue depth allows. */
    public void enqueue(List<Chunk> chunks) {
        Claimed claimed;
        synchronized (this) {
            for (Chunk c : chunks) {
                c.connection = this;
                pending.add(c);
            }
            claimed = claimLocked(null);
        }
        post(claimed);
    }

    /** Chunks taken off {@link #pending} under this object's lock: to post, and to fail. */
    private static final class Claimed {
        Chunk first;                // the usual case: one chunk to post, no list
        List<Chunk> more;
        List<Chunk> refused;
        /** How many chunks may come: the list of more never grows. */
        private final int expected;

        Claimed() {
            this(0);
        }

        Claimed(int expected) {
            this.expected = expected;
        }

        void post(Chunk c) {
            if (first == null) {
                first = c;
            } else {
                (more == null ? more = new ArrayList<>(Math.max(10, expected - 1)) : more).add(c);
            }
        }

        void refuse(Chunk c) {
            (refused == null ? refused = new ArrayList<>() : refused).add(c);
        }
    }

    /**
     * Claims pending chunks while credits last: each takes a credit, a completion-queue entry and a
     * work request id, and counts as in flight until it completes or its post fails. Chunks of an
     * aborted submission, and every chunk once the queue pair left service, are refused instead.
     *
     * @param claimed where to add them, or null
     * @return {@code claimed}, or a new one when it was null and a chunk was claimed or refused; null
     *         when nothing was (a completion with nothing waiting allocates nothing)
     */
    private Claimed claimLocked(Claimed claimed) {
        int reserved = 0;       // completion-queue entries taken (several at once) for chunks not claimed yet
        while (!pending.isEmpty() && (credits > 0 || brokenBecause != null)) {
            Chunk c = pending.poll();
            if (claimed == null) {
                claimed = new Claimed(Math.min(pending.size() + 1, credits));
            }
            if (brokenBecause != null || c.submission.isAborted()) {
                claimed.refuse(c);
                continue;
            }
            if (reserved == 0) {
                int wanted = Math.min(credits, pending.size() + 1);
                reserved = device.reserveCompletions(wanted);
                if (reserved == 0) {
                    if (!starved) {
                        starved = true;
                        device.starved(this);       // then try again: room freed before we queued up wakes no one
                    }
                    reserved = device.reserveCompletions(wanted);
                    if (reserved == 0) {
                        pending.addFirst(c);
                        break;      // claimed may be empty now: post() handles that
                    }
                }
            }
            reserved--;
            device.track(c);
            credits--;
            inFlight++;
            claimed.post(c);
        }
        device.releaseCompletions(reserved);        // taken for chunks that turned out refused
        return claimed;
    }

    /**
     * Posts what {@link #claimLocked} claimed, then fails what it refused. Its completions may be
     * delivered by another thread before this returns.
     */
    private void post(Claimed claimed) {
        if (claimed == null) {
            return;
        }
        if (claimed.first != null) {
            posting.post(claimed.first, claimed.more);
        }
        if (claimed.refused != null) {
            refuse(claimed.refused);
        }
    }

    /**
     * The completion of {@code c}, posted here, was taken off the completion queue (status {@code
     * status}): moves the chunks posted here before it, of which no completion was taken, into
     * {@code before} (oldest first; the caller takes them from the device's table and retires
     * them as the class comment says), and forgets them and {@code c}. Called in the order the
     * completions were taken, under the device's poll lock.
     */
    public void takeSent(Chunk c, List<Chunk> before) {
        chains.takeSent(c, before);
    }

    /** Claimed chunks that were not posted ({@code why}): their credits and entries come back, the queue pair leaves service, they fail. */
    private void notPosted(List<Chunk> unposted, String why) {
        Claimed claimed = new Claimed();
        synchronized (this) {
            device.releaseCompletions(unposted.size());
            credits += unposted.size();
            inFlight -= unposted.size();
            if (brokenBecause == null) {
                breakLocked(why);
            }
            unposted.forEach(claimed::refuse);
            claimLocked(claimed);       // refuses what waits (into claimed): the queue pair left service
            destroyIfDrainedLocked();
        }
        post(claimed);
    }

    private void refuse(List<Chunk> refused) {
        for (Chunk c : refused) {
            String why;
            synchronized (this) {
                why = brokenBecause;
            }
            String error = why == null ? "not posted: the op was cancelled or timed out" : "not posted: the queue pair to "
                    + peer + " is out of service (" + why + ")";
            if (!c.submission.isAborted() && c.collateral()) {
                c.submission.collateral(c, error);
            } else {
                c.submission.chunkDone(c, -1, error);
            }
        }
    }

    /** The device has completion-queue room again: posts what waits for it. */
    public void resume() {
        Claimed claimed;
        synchronized (this) {
            starved = false;
            claimed = claimLocked(null);
            destroyIfDrainedLocked();
        }
        post(claimed);
    }

    /** {@code n} posted chunks completed successfully: returns their credits and entries, posts more. */
    void retired(int n) {
        device.releaseCompletions(n);
        Claimed claimed;
        synchronized (this) {
            credits += n;
            inFlight -= n;
            claimed = claimLocked(null);
            destroyIfDrainedLocked();
        }
        post(claimed);
    }

    /** A posted chunk completed: returns its credit, breaks the queue pair on failure, posts more. */
    void retired(boolean failed, String error) {
        device.releaseCompletion();
        Claimed claimed;
        synchronized (this) {
            credits++;
            inFlight--;
            if (failed && brokenBecause == null) {
                breakLocked(error);
            }
            claimed = claimLocked(null);
            destroyIfDrainedLocked();
        }
        post(claimed);
    }

    /**
     * Takes the queue pair out of service: moves it to ERROR so that every work request still in
     * flight completes (flushed) and the device touches none of their memory afterwards. Idempotent.
     */
    public void breakDown(String why) {
        breakDown(why, null);
    }

    /**
     * As {@link #breakDown(String)}; {@code culprit}, when not null, is the submission whose
     * abort (a cancel, a timeout) this is: the chunks of others are posted again elsewhere.
     */
    void breakDown(String why, VerbsSubmission culprit) {
        breakDown(why, culprit, false);
    }

    /**
     * As {@link #breakDown(String)}, for a peer found gone (its endpoint refuses, another
     * incarnation answers there, it stayed silent): the chunks flushed or refused here fail as
     * unreachable ({@link #peerGone}), as those whose transport retries ran out would.
     */
    public void breakDownPeerGone(String why) {
        breakDown(why, null, true);
    }

    private void breakDown(String why, VerbsSubmission culprit, boolean gone) {
        Claimed claimed;
        synchronized (this) {
            if (brokenBecause == null) {
                brokenFor = culprit;
                peerGone = gone;
                breakLocked(why);
            }
            claimed = claimLocked(null);
            destroyIfDrainedLocked();
        }
        post(claimed);
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

    /**
     * Destroys the queue pair now, with work requests still in flight on it (their flush did not
     * come in time): once {@code ibv_destroy_qp} returned, the device touches none of their memory.
     * Then has the device account for them as flushed ({@link VerbsDevice#retireDestroyed}).
     * Idempotent; does nothing once the queue pair was destroyed.
     */
    void destroyNow(String why) {
        synchronized (this) {
            if (destroyed) {
                return;
            }
            if (brokenBecause == null) {
                breakLocked(why);
            }
            destroyed = true;
            closeQuietly();
        }
        device.retireDestroyed(this, why);
    }

    /** Destroys the queue pair now (transport close: the device is closing too). */
    public synchronized void close() {
        if (!destroyed) {
            destroyed = true;
            brokenBecause = brokenBecause == null ? "closed" : brokenBecause;
            closeQuietly();
        }
    }

    /**
     * Destroys the queue pair and frees the work request, once no thread posts: a poster whose
     * work request completed (with an error that broke the queue pair) may still be inside
     * {@code ibv_post_send}. Under this object's lock, so no chunk is claimed meanwhile.
     */
    private void closeQuietly() {
        posting.exclusively(() -> {
            try {
                qp.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "destroying queue pair {0} to {1} failed: {2}", qp.number(), peer,
                        e.getMessage());
            } finally {
                chains.close();
            }
        });
    }

    @Override
    public String toString() {
        return "queue pair " + qp.number() + " on " + device + " to " + peer;
    }
}
