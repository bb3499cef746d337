package io.rdma4j.transport.ibverbs.posting;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Who posts, in a queue pair's posting turn: nobody waits for a thread that is posting. */
@Timeout(60)
class PostingTurnTest {

    /** Records what was posted, by which thread, and whether two threads ever posted at once. */
    private static class Recorder implements PostingTurn.Poster<String> {
        final List<String> posted = Collections.synchronizedList(new ArrayList<>());
        final List<String> postedBy = Collections.synchronizedList(new ArrayList<>());
        final List<List<String>> failedRounds = Collections.synchronizedList(new ArrayList<>());
        final List<List<String>> rounds = Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger inside = new AtomicInteger();
        volatile boolean overlapped;

        @Override
        public PostingTurn.Failed<String> post(List<String> items) {
            if (inside.incrementAndGet() > 1) {
                overlapped = true;
            }
            try {
                rounds.add(List.copyOf(items));
                for (int i = 0; i < items.size(); i++) {
                    String item = items.get(i);
                    String own = postOne(item);
                    if (own != null) {
                        return new PostingTurn.Failed<>(List.copyOf(items.subList(i, items.size())), own);
                    }
                    posted.add(item);
                    postedBy.add(Thread.currentThread().getName());
                }
                return null;
            } finally {
                inside.decrementAndGet();
            }
        }

        /** Posts one item: null, or why it failed. */
        String postOne(String item) {
            return null;
        }

        @Override
        public void roundFailed(List<String> items, String failure) {
            failedRounds.add(List.copyOf(items));
        }
    }

    /** A recorder whose post of "first" holds the turn until {@link #letFirstGo} is counted down. */
    private static class HeldOnFirst extends Recorder {
        final CountDownLatch firstInside = new CountDownLatch(1);
        final CountDownLatch letFirstGo = new CountDownLatch(1);

        @Override
        String postOne(String item) {
            if (item.equals("first")) {
                firstInside.countDown();
                await(letFirstGo);
            }
            return null;
        }

        /** Posts "first" on a thread called {@code name}; returns once that thread is inside the post. */
        CompletableFuture<Void> postFirst(PostingTurn<String> turn, String name) throws InterruptedException {
            CompletableFuture<Void> first = runAsync(name, () -> turn.post("first"));
            assertTrue(firstInside.await(30, TimeUnit.SECONDS));
            return first;
        }
    }

    @Test
    void aThreadThatFindsAnotherPosting_leavesItsItemToIt_andDoesNotWait() throws Exception {
        HeldOnFirst recorder = new HeldOnFirst();
        PostingTurn<String> turn = new PostingTurn<>(recorder);
        CompletableFuture<Void> first = recorder.postFirst(turn, "poster-a");

        CompletableFuture<Void> second = runAsync("poster-b", () -> turn.post("second"));
        second.get(30, TimeUnit.SECONDS);       // returned while poster-a is still inside its post
        assertFalse(first.isDone());
        assertEquals(List.of(), recorder.posted);

        recorder.letFirstGo.countDown();
        first.get(30, TimeUnit.SECONDS);
        assertEquals(List.of("first", "second"), recorder.posted);
        assertEquals(List.of("poster-a", "poster-a"), recorder.postedBy);
    }

    @Test
    void anItemHandedOverAsTheRoundEnds_isPostedAfterTheTurnIsLetGo_beforeThePosterReturns() throws Exception {
        for (boolean direct : new boolean[]{true, false}) {
            List<String> lateReturned = Collections.synchronizedList(new ArrayList<>());
            AtomicReference<PostingTurn<String>> turn = new AtomicReference<>();
            Recorder recorder = new Recorder() {
                boolean injected;

                @Override
                public void roundEnded() {
                    if (!injected) {    // another thread hands an item over after the round's last look
                        injected = true;
                        CompletableFuture<Void> late = runAsync("late", () -> turn.get().post("late"));
                        try {
                            late.get(30, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                        lateReturned.add("late returned");
                    }
                }
            };
            turn.set(new PostingTurn<>(recorder));

            if (direct) {
                turn.get().post("a");
            } else {
                turn.get().post("a", List.of("b"));
            }

            assertEquals(List.of("late returned"), lateReturned, "direct " + direct);
            assertEquals(direct ? List.of("a", "late") : List.of("a", "b", "late"), recorder.posted, "direct " + direct);
            assertEquals(Thread.currentThread().getName(), recorder.postedBy.getLast(), "direct " + direct);
        }
    }

    @Test
    void withNobodyPosting_anItemIsPostedByTheCallerBeforeItReturns() {
        Recorder recorder = new Recorder();
        PostingTurn<String> turn = new PostingTurn<>(recorder);

        turn.post("one");
        turn.post("two", List.of("three", "four"));

        assertEquals(List.of("one", "two", "three", "four"), recorder.posted);
        assertEquals(Collections.nCopies(4, Thread.currentThread().getName()), recorder.postedBy);
    }

    @Test
    void itemsHandedOverWhileAnotherThreadPosts_arePostedByItAsOneRound_inTheOrderHandedOver() throws Exception {
        HeldOnFirst recorder = new HeldOnFirst();
        PostingTurn<String> turn = new PostingTurn<>(recorder);
        CompletableFuture<Void> first = recorder.postFirst(turn, "poster-a");
        runAsync("poster-b", () -> turn.post("b1", List.of("b2", "b3"))).get(30, TimeUnit.SECONDS);
        runAsync("poster-c", () -> turn.post("c")).get(30, TimeUnit.SECONDS);

        recorder.letFirstGo.countDown();
        first.get(30, TimeUnit.SECONDS);

        assertEquals(List.of(List.of("first"), List.of("b1", "b2", "b3", "c")), recorder.rounds);
    }

    @Test
    void afterAFailedPost_theRestOfTheRoundIsNotPosted_andIsReportedWithIt() {
        Recorder recorder = new Recorder() {
            @Override
            String postOne(String item) {
                return item.equals("b") ? "refused b" : null;
            }
        };
        PostingTurn<String> turn = new PostingTurn<>(recorder);

        turn.post("a", List.of("b", "c", "d"));
        turn.post("e");

        assertEquals(List.of("a", "e"), recorder.posted);
        assertEquals(List.of(List.of("b", "c", "d")), recorder.failedRounds);
    }

    @Test
    void aFailedDirectPost_isReportedBeforeWhatWasHandedOverMeanwhileIsPosted() throws Exception {
        List<Integer> postedWhenReported = Collections.synchronizedList(new ArrayList<>());
        HeldOnFirst recorder = new HeldOnFirst() {
            @Override
            String postOne(String item) {
                super.postOne(item);
                return item.equals("first") ? "refused first" : null;
            }

            @Override
            public void roundFailed(List<String> items, String failure) {
                postedWhenReported.add(posted.size());
                super.roundFailed(items, failure);
            }
        };
        PostingTurn<String> turn = new PostingTurn<>(recorder);
        CompletableFuture<Void> first = recorder.postFirst(turn, "poster-a");
        runAsync("poster-b", () -> turn.post("second")).get(30, TimeUnit.SECONDS);

        recorder.letFirstGo.countDown();
        first.get(30, TimeUnit.SECONDS);

        assertEquals(List.of(List.of("first")), recorder.failedRounds);
        assertEquals(List.of(0), postedWhenReported);
        assertEquals(List.of("second"), recorder.posted);
    }

    @Test
    void aFailedSinglePost_isReportedAlone() {
        Recorder recorder = new Recorder() {
            @Override
            String postOne(String item) {
                return "refused " + item;
            }
        };
        PostingTurn<String> turn = new PostingTurn<>(recorder);

        turn.post("x");

        assertEquals(List.of(), recorder.posted);
        assertEquals(List.of(List.of("x")), recorder.failedRounds);
    }

    @Test
    void manyThreadsPostingAtOnce_everyItemIsPostedOnce_byOneThreadAtATime_beforeTheLastCallReturns()
            throws Exception {
        int threads = 8;
        int perThread = 20_000;
        Recorder recorder = new Recorder();
        PostingTurn<String> turn = new PostingTurn<>(recorder);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<CompletableFuture<Void>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            done.add(runAsync("poster-" + t, () -> {
                await(start);
                for (int i = 0; i < perThread; i++) {
                    if (i % 3 == 0) {
                        turn.post(thread + ":" + i, List.of(thread + ":" + i + "b"));
                    } else {
                        turn.post(thread + ":" + i);
                    }
                }
            }));
        }
        for (CompletableFuture<Void> f : done) {
            f.get(60, TimeUnit.SECONDS);
        }

        int expected = threads * (perThread + (perThread + 2) / 3);
        Set<String> distinct = new HashSet<>(recorder.posted);
        assertEquals(expected, recorder.posted.size());
        assertEquals(expected, distinct.size());
        assertFalse(recorder.overlapped, "two threads posted at once");
    }

    @Test
    void exclusively_waitsForTheThreadPosting_thenRunsWithNobodyPosting() throws Exception {
        HeldOnFirst recorder = new HeldOnFirst();
        PostingTurn<String> turn = new PostingTurn<>(recorder);
        CompletableFuture<Void> first = recorder.postFirst(turn, "poster");

        List<Integer> postingDuringAction = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Thread> closer = new AtomicReference<>();
        CompletableFuture<Void> closed = runAsync("closer", () -> {
            closer.set(Thread.currentThread());
            turn.exclusively(() -> postingDuringAction.add(recorder.inside.get()));
        });
        while (closer.get() == null || closer.get().getState() != Thread.State.WAITING) {     // parked on the turn
            assertFalse(closed.isDone(), "exclusively ran while a thread was posting");
            Thread.onSpinWait();
        }
        recorder.letFirstGo.countDown();
        first.get(30, TimeUnit.SECONDS);
        closed.get(30, TimeUnit.SECONDS);

        assertEquals(List.of(0), postingDuringAction);
    }

    private static CompletableFuture<Void> runAsync(String name, ThrowingRunnable body) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        Thread.ofPlatform().name(name).start(() -> {
            try {
                body.run();
                f.complete(null);
            } catch (Throwable e) {
                f.completeExceptionally(e);
            }
        });
        return f;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("latch not released within 30 s");
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CyclicBarrier barrier) throws Exception {
        barrier.await(30, TimeUnit.SECONDS);
    }
}
