package io.rdma4j.bench.cli;

import io.rdma4j.RdmaAction;
import org.HdrHistogram.Histogram;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * Measures one op at one size: {@code inflight} threads each submit their own action (of
 * {@code batch} ops) and await it, back to back, so that {@code inflight} actions are outstanding
 * at any time; warmup first, then the measured part. Each thread records the latency of its
 * measured actions into a histogram of its own; they are added up at the end.
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
        Histogram total = new Histogram(SIGNIFICANT_DIGITS);
        long firstStart = Long.MAX_VALUE;
        long lastEnd = Long.MIN_VALUE;
        for (Worker w : workers) {
            if (w.failure != null) {
                throw w.failure;
            }
            total.add(w.latencies);
            if (w.latencies.getTotalCount() > 0) {
                firstStart = Math.min(firstStart, w.firstStart);
                lastEnd = Math.max(lastEnd, w.lastEnd);
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

    private static final class Worker implements Runnable {
        private final Clock clock;
        private final RdmaAction action;
        private final Awaiter awaiter;
        private final Histogram latencies = new Histogram(SIGNIFICANT_DIGITS);
        private long firstStart;
        private long lastEnd;
        private Exception failure;

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
                    long t1 = System.nanoTime();
                    if (phase == Clock.Phase.MEASURE) {
                        if (latencies.getTotalCount() == 0) {
                            firstStart = t0;
                        }
                        latencies.recordValue(t1 - t0);
                        lastEnd = t1;
                    }
                }
            } catch (Exception e) {
                failure = e instanceof CompletionException && e.getCause() instanceof Exception c ? c : e;
                clock.fail();
            }
        }
    }
}
