package io.rdma4j.bench.cli;

import io.rdma4j.RdmaAction;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * Measures one op at one size: {@code inflight} threads each submit their own action (of
 * {@code batch} ops) and await it, back to back, so that {@code inflight} actions are outstanding
 * at any time; warmup first, then the measured part. Each thread records the latency of its
 * measured actions into a histogram of its own; they are added up at the end. Or, chained
 * ({@link #runChained}), no thread waits: each of {@code inflight} chains submits its action again
 * from the completion of the one before, on whatever thread completes it.
 *
 * <p>Bandwidth and message rate are taken over the measured part's wall time: from the first
 * measured action's start to the last one's end. An action counts as measured when it starts in
 * the measured part.
 */
final class Measurement {

    /** Latencies are recorded in nanoseconds with three significant digits. */
    static final int SIGNIFICANT_DIGITS = 3;

    private Measurement() {
    }

    /** What to run: warmup and measured part, by count or by time. */
    sealed interface Plan {
        /** Exactly {@code warmup} then {@code measured} actions, over all threads. */
        static Plan count(int warmup, int measured) {
            return new Count(warmup, measured);
        }

        /** Warmup for {@code warmup}, then measure for {@code measured} and at least {@code minMeasured} actions. */
        static Plan timed(Duration warmup, Duration measured, int minMeasured) {
            return new Timed(0, warmup, measured, minMeasured);
        }

        /** {@code warmupActions} warmup actions, then measure for {@code measured} and at least {@code minMeasured}. */
        static Plan timedAfterCount(int warmupActions, Duration measured, int minMeasured) {
            return new Timed(warmupActions, Duration.ZERO, measured, minMeasured);
        }

        /** A short description for the progress line. */
        String describe();
    }

    record Count(int warmup, int measured) implements Plan {
        @Override
        public String describe() {
            return warmup + " warmup + " + measured + " measured actions";
        }
    }

    record Timed(int warmupActions, Duration warmup, Duration measured, int minMeasured) implements Plan {
        @Override
        public String describe() {
            String w = warmupActions > 0 ? warmupActions + " warmup actions" : Durations.format(warmup) + " warmup";
            return w + " + " + Durations.format(measured) + " measured";
        }
    }

    /** Runs one action and waits for it; throws what it failed with. */
    interface Awaiter {
        void await(RdmaAction action) throws Exception;
    }

    /** What one point measured, before it is turned into a {@link PerfResult}. */
    record Outcome(Histogram latencies, long actions, long elapsedNanos) {
    }

    /** Progress as the threads go: actions measured so far. */
    interface Listener {
        void measured(long actions);
    }

    /**
     * Runs {@code plan} with {@code inflight} threads.
     *
     * @param actions  the action of thread {@code i}; each thread keeps its own
     * @param awaiter  how an action is submitted and awaited
     * @param listener called on the calling thread about ten times a second
     * @throws Exception the first failure of any action; the other threads stop after their current one
     */
    static Outcome run(Plan plan, int inflight, IntFunction<RdmaAction> actions, Awaiter awaiter, Listener listener)
            throws Exception {
        Clock clock = new Clock(plan);
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < inflight; i++) {
            workers.add(new Worker(clock, actions.apply(i), awaiter));
        }
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            threads.add(Thread.ofPlatform().name("rdma-perf-inflight-" + i).start(workers.get(i)));
        }
        for (Thread t : threads) {
            while (!t.join(Duration.ofMillis(100))) {
                listener.measured(clock.measuredCount());
            }
        }
        listener.measured(clock.measuredCount());
        return total(workers.stream().map(w -> w.record).toList());
    }

    /**
     * Runs {@code plan} as {@code inflight} chains: each submits its action, and the action's
     * completion, on the thread that completes it, records it and submits it again. No thread
     * waits for an action; this thread only reports progress until every chain has stopped.
     *
     * @param actions  the action of chain {@code i}
     * @param submit   submits an action; must not block
     * @param listener called on the calling thread about ten times a second
     * @throws Exception the first failure of any action; the other chains stop after their current one
     */
    static Outcome runChained(Plan plan, int inflight, IntFunction<RdmaAction> actions,
                              Function<RdmaAction, CompletableFuture<?>> submit, Listener listener) throws Exception {
        Clock clock = new Clock(plan);
        CountDownLatch stopped = new CountDownLatch(inflight);
        List<Chain> chains = new ArrayList<>();
        for (int i = 0; i < inflight; i++) {
            chains.add(new Chain(clock, actions.apply(i), submit, stopped));
        }
        for (Chain c : chains) {
            c.drive();
        }
        while (!stopped.await(100, TimeUnit.MILLISECONDS)) {
            listener.measured(clock.measuredCount());
        }
        listener.measured(clock.measuredCount());
        return total(chains.stream().map(c -> c.record).toList());
    }

    private static Outcome total(List<Record> records) throws Exception {
        Histogram total = new Histogram(SIGNIFICANT_DIGITS);
        long firstStart = Long.MAX_VALUE;
        long lastEnd = Long.MIN_VALUE;
        for (Record r : records) {
            if (r.failure != null) {
                throw r.failure;
            }
            total.add(r.latencies);
            if (r.latencies.getTotalCount() > 0) {
                firstStart = Math.min(firstStart, r.firstStart);
                lastEnd = Math.max(lastEnd, r.lastEnd);
            }
        }
        long elapsed = total.getTotalCount() == 0 ? 0 : lastEnd - firstStart;
        return new Outcome(total, total.getTotalCount(), elapsed);
    }

    /** Decides, for each action about to start, whether it is warmup, measured, or not run. */
    private static final class Clock {
        private final Plan plan;
        private final AtomicLong tickets = new AtomicLong();
        private final AtomicLong measured = new AtomicLong();
        private final AtomicBoolean failed = new AtomicBoolean();
        private final long start = System.nanoTime();
        private volatile long measureFrom; // Timed with warmup actions: when the last warmup ticket went

        private Clock(Plan plan) {
            this.plan = plan;
        }

        enum Phase { WARMUP, MEASURE, STOP }

        Phase next() {
            if (failed.get()) {
                return Phase.STOP;
            }
            return switch (plan) {
                case Count c -> {
                    long t = tickets.getAndIncrement();
                    if (t < c.warmup()) {
                        yield Phase.WARMUP;
                    }
                    yield t < (long) c.warmup() + c.measured() ? measuredTicket() : Phase.STOP;
                }
                case Timed t -> {
                    long now = System.nanoTime();
                    long measureStart;
                    if (t.warmupActions() > 0) {
                        long ticket = tickets.getAndIncrement();
                        if (ticket < t.warmupActions()) {
                            yield Phase.WARMUP;
                        }
                        if (measureFrom == 0) {
                            synchronized (this) {
                                if (measureFrom == 0) {
                                    measureFrom = now;
                                }
                            }
                        }
                        measureStart = measureFrom;
                    } else {
                        measureStart = start + t.warmup().toNanos();
                        if (now < measureStart) {
                            yield Phase.WARMUP;
                        }
                    }
                    boolean timeLeft = now - measureStart < t.measured().toNanos();
                    yield timeLeft || measured.get() < t.minMeasured() ? measuredTicket() : Phase.STOP;
                }
            };
        }

        private Phase measuredTicket() {
            measured.incrementAndGet();
            return Phase.MEASURE;
        }

        long measuredCount() {
            return measured.get();
        }

        void fail() {
            failed.set(true);
        }
    }

    /** What one thread or chain measured, and how it failed. */
    private static final class Record {
        private final Histogram latencies = new Histogram(SIGNIFICANT_DIGITS);
        private long firstStart;
        private long lastEnd;
        private volatile Exception failure;

        void ended(Clock.Phase phase, long t0, long t1) {
            if (phase == Clock.Phase.MEASURE) {
                if (latencies.getTotalCount() == 0) {
                    firstStart = t0;
                }
                latencies.recordValue(t1 - t0);
                lastEnd = t1;
            }
        }

        void failed(Throwable t, Clock clock) {
            Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            failure = cause instanceof Exception e ? e : new IllegalStateException(cause);
            clock.fail();
        }
    }

    private static final class Worker implements Runnable {
        private final Clock clock;
        private final RdmaAction action;
        private final Awaiter awaiter;
        private final Record record = new Record();

        Worker(Clock clock, RdmaAction action, Awaiter awaiter) {
            this.clock = clock;
            this.action = action;
            this.awaiter = awaiter;
        }

        @Override
        public void run() {
            try {
                Clock.Phase phase;
                while ((phase = clock.next()) != Clock.Phase.STOP) {
                    long t0 = System.nanoTime();
                    awaiter.await(action);
                    record.ended(phase, t0, System.nanoTime());
                }
            } catch (Exception e) {
                record.failed(e, clock);
            }
        }
    }

    /**
     * One action submitted again and again, each time from the completion of the time before. A
     * completion that is already there when the submit returns is taken in a loop here, not by
     * a nested call, so that a transport that completes at once does not deepen the stack.
     */
    private static final class Chain {
        private final Clock clock;
        private final RdmaAction action;
        private final Function<RdmaAction, CompletableFuture<?>> submit;
        private final CountDownLatch stopped;
        private final Record record = new Record();

        Chain(Clock clock, RdmaAction action, Function<RdmaAction, CompletableFuture<?>> submit,
              CountDownLatch stopped) {
            this.clock = clock;
            this.action = action;
            this.submit = submit;
            this.stopped = stopped;
        }

        void drive() {
            try {
                Clock.Phase phase;
                while ((phase = clock.next()) != Clock.Phase.STOP) {
                    long t0 = System.nanoTime();
                    CompletableFuture<?> f = submit.apply(action);
                    if (!f.isDone()) {
                        Clock.Phase p = phase;
                        f.whenComplete((ignored, failure) -> {
                            if (ended(p, t0, failure)) {
                                drive();
                            }
                        });
                        return;
                    }
                    if (!ended(phase, t0, failureOf(f))) {
                        return;
                    }
                }
                stopped.countDown();
            } catch (RuntimeException | Error e) {
                record.failed(e, clock);
                stopped.countDown();
            }
        }

        /** Records one ended action; false, with the chain stopped, if it failed. */
        private boolean ended(Clock.Phase phase, long t0, Throwable failure) {
            long t1 = System.nanoTime();
            if (failure != null) {
                record.failed(failure, clock);
                stopped.countDown();
                return false;
            }
            record.ended(phase, t0, t1);
            return true;
        }

        private static Throwable failureOf(CompletableFuture<?> done) {
            try {
                done.join();
                return null;
            } catch (CompletionException | CancellationException e) {
                return e;
            }
        }
    }
}
