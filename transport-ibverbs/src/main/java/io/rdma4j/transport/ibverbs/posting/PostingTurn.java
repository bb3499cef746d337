package io.rdma4j.transport.ibverbs.posting;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Whose turn it is to post to a queue pair, where posting must be done by one thread at a time
 * and must not make other threads wait: a thread that finds another one posting leaves its items
 * to that thread and returns at once; the thread posting posts them before it lets go, and looks
 * again after letting go, so that nothing handed over is left behind. On soft-RoCE {@code
 * ibv_post_send} sends the whole message before it returns; threads that queued on a plain lock
 * instead spent most of their time parked there, in a convoy that a preempted holder stretched to
 * tens of milliseconds.
 *
 * <p>Items are posted in rounds, one round per turn, in the order they were handed over: all
 * the items waiting when the turn was taken, handed to {@link Poster#post} at once (which posts
 * them as one chain of work requests, or a few). When it could not post them all, {@link
 * Poster#roundFailed} gets those it did not post, after the turn is let go.
 *
 * <p>Thread-safe.
 *
 * @param <T> what is posted
 */
public final class PostingTurn<T> {

    /** What posting an item means; called by whichever thread has the turn. */
    interface Poster<T> {
        /**
         * Posts {@code items}, in order, with the turn held; must not block on other threads, and
         * must not keep {@code items} (the list is reused).
         *
         * @return null when all were posted; else the items not posted (from the first refused one
         *         on, in order, in a list of their own) and why
         */
        Failed<T> post(List<T> items);

        /** A round failed: called without the turn, with what {@link #post} returned. */
        void roundFailed(List<T> items, String failure);

        /**
         * A round ended and the turn is about to be let go; called with the turn held. Items
         * handed over from now on are posted by a thread that looks again after letting go.
         */
        default void roundEnded() {
        }
    }

    /**
     * The items of a round that were not posted, and why.
     *
     * @param items   not posted, in order
     * @param failure why
     * @param <T>     what is posted
     */
    record Failed<T>(List<T> items, String failure) {
    }

    private final ReentrantLock turn = new ReentrantLock();
    private final ConcurrentLinkedQueue<T> handed = new ConcurrentLinkedQueue<>();
    private final Poster<T> poster;
    /** The round being posted; used with the turn held. */
    private final ArrayList<T> round = new ArrayList<>();

    PostingTurn(Poster<T> poster) {
        this.poster = poster;
    }

    /** Posts {@code item}: {@link #post(Object, List)} with nothing more. */
    void post(T item) {
        post(item, null);
    }

    /**
     * Posts {@code first}, then {@code more} (may be null), in that order: now, when no other
     * thread posts and nothing waits (no queue then), or leaves them to the thread that posts.
     */
    void post(T first, List<T> more) {
        if (handed.isEmpty() && turn.tryLock()) {      // nothing handed over and nobody posting: no queue
            Failed<T> failed;
            try {
                round.add(first);
                if (more != null) {
                    round.addAll(more);
                }
                failed = postRound();
            } finally {
                turn.unlock();
            }
            if (failed != null) {
                poster.roundFailed(failed.items(), failed.failure());
            }
            postHanded();       // what was handed over while this thread had the turn
            return;
        }
        handed.add(first);
        if (more != null) {
            handed.addAll(more);
        }
        postHanded();
    }

    /** Posts {@link #round} and empties it; with the turn held. */
    private Failed<T> postRound() {
        try {
            return poster.post(round);
        } finally {
            round.clear();
            poster.roundEnded();
        }
    }

    /**
     * Runs {@code action} while no thread posts, waiting for the turn (to destroy what is posted
     * to). Items handed over meanwhile are posted by the next thread to post.
     */
    void exclusively(Runnable action) {
        turn.lock();
        try {
            action.run();
        } finally {
            turn.unlock();
        }
    }

    private void postHanded() {
        // An item handed over while the thread posting was letting go is seen by this look
        // again: the hand-over comes before the failed tryLock, which comes before that unlock.
        while (!handed.isEmpty() && turn.tryLock()) {
            Failed<T> failed;
            try {
                T item;
                while ((item = handed.poll()) != null) {
                    round.add(item);
                }
                failed = round.isEmpty() ? null : postRound();
            } finally {
                turn.unlock();
            }
            if (failed != null) {
                poster.roundFailed(failed.items(), failed.failure());
            }
        }
    }
}
