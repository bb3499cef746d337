package io.rdma4j.bench.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaSubmitException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The measuring loop, over real TCP between two managers in this JVM. */
@Timeout(60)
class MeasurementTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private RdmaManager owner;
    private RdmaManager reader;
    private RdmaBuffer buffer;
    private Arena arena;
    private MemorySegment local;

    @BeforeEach
    void start() {
        try {
            owner = RdmaManager.newBuilder().isolated().build();
            reader = RdmaManager.newBuilder().isolated().build();
        } catch (RuntimeException e) {
            Assumptions.abort("no usable transport: " + e.getMessage());
        }
        buffer = owner.allocate(64).join();
        arena = Arena.ofShared();
        local = arena.allocate(64);
    }

    @AfterEach
    void stop() {
        if (arena != null) {
            arena.close();
        }
        if (reader != null) {
            reader.close();
        }
        if (owner != null) {
            owner.close();
        }
    }

    private RdmaAction read(int batch) {
        RdmaAction action = reader.newAction();
        for (int i = 0; i < batch; i++) {
            action.readInto(buffer.remote(), local);
        }
        return action;
    }

    @Test
    void countPlan_measuresExactlyThatMany_overAllThreads_afterTheWarmup() throws Exception {
        AtomicInteger submitted = new AtomicInteger();
        Set<String> threads = ConcurrentHashMap.newKeySet();
        // Each thread's first action waits for the other three to take theirs: with a transport
        // fast enough (shm: under a microsecond), one thread could otherwise run every action.
        CountDownLatch allFour = new CountDownLatch(4);
        Measurement.Outcome outcome = Measurement.run(Measurement.Plan.count(5, 40), 4, i -> read(2), a -> {
            submitted.incrementAndGet();
            if (threads.add(Thread.currentThread().getName())) {
                allFour.countDown();
                allFour.await(30, TimeUnit.SECONDS);
            }
            a.submit(TIMEOUT).join();
        }, n -> { });

        assertEquals(40, outcome.actions());
        assertEquals(40, outcome.latencies().getTotalCount());
        assertEquals(45, submitted.get());
        assertEquals(4, threads.size(), threads.toString());
        assertTrue(outcome.elapsedNanos() > 0);
        assertTrue(outcome.latencies().getMinValue() > 0);
    }

    @Test
    void timedPlan_measuresAtLeastTheMinimum_evenWhenTheTimeIsTooShort() throws Exception {
        Measurement.Outcome outcome = Measurement.run(Measurement.Plan.timed(Duration.ZERO, Duration.ofNanos(1), 25), 2,
                i -> read(1), a -> a.submit(TIMEOUT).join(), n -> { });

        assertTrue(outcome.actions() >= 25, "measured " + outcome.actions());
    }

    @Test
    void timedPlan_withWarmupActions_runsThemFirst_unmeasured() throws Exception {
        AtomicInteger submitted = new AtomicInteger();
        Measurement.Outcome outcome = Measurement.run(Measurement.Plan.timedAfterCount(30, Duration.ofNanos(1), 10), 1,
                i -> read(1), a -> {
                    submitted.incrementAndGet();
                    a.submit(TIMEOUT).join();
                }, n -> { });

        assertEquals(10, outcome.actions());
        assertEquals(40, submitted.get());
    }

    @Test
    void chained_countPlan_measuresExactlyThatMany_afterTheWarmup_withoutAWaitingThread() throws Exception {
        AtomicInteger submitted = new AtomicInteger();
        Set<String> threads = ConcurrentHashMap.newKeySet();
        Measurement.Outcome outcome = Measurement.runChained(Measurement.Plan.count(5, 40), 4, i -> read(2), a -> {
            submitted.incrementAndGet();
            threads.add(Thread.currentThread().getName());
            return a.submit(TIMEOUT);
        }, n -> { });

        assertEquals(40, outcome.actions());
        assertEquals(40, outcome.latencies().getTotalCount());
        assertEquals(45, submitted.get());
        assertTrue(threads.stream().noneMatch(t -> t.startsWith("rdma-perf-inflight")), threads.toString());
    }

    @Test
    void chained_completionsThatAreAlreadyThere_doNotDeepenTheStack() throws Exception {
        Measurement.Outcome outcome = Measurement.runChained(Measurement.Plan.count(0, 200_000), 1, i -> read(1),
                a -> CompletableFuture.completedFuture(null), n -> { });

        assertEquals(200_000, outcome.actions());
    }

    @Test
    void chained_aFailingAction_stopsEveryChain_andIsRethrownUnwrapped() {
        owner.release(buffer.remote()).join();

        RdmaSubmitException e = assertThrows(RdmaSubmitException.class, () -> Measurement.runChained(
                Measurement.Plan.count(0, 1_000_000), 3, i -> read(1), a -> a.submit(TIMEOUT), n -> { }));
        assertTrue(e.getMessage().contains("released") || e.getMessage().contains("unknown"), e.getMessage());
    }

    @Test
    void chained_aSubmitThatThrows_isRethrown() {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Measurement.runChained(
                Measurement.Plan.count(0, 10), 2, i -> read(1), a -> {
                    throw new IllegalStateException("cannot submit");
                }, n -> { }));
        assertEquals("cannot submit", e.getMessage());
    }

    @Test
    void aFailingAction_stopsEveryThread_andIsRethrown() {
        owner.release(buffer.remote()).join();

        IllegalStateException e = assertThrows(IllegalStateException.class, () -> Measurement.run(
                Measurement.Plan.count(0, 1_000_000), 3, i -> read(1), a -> {
                    try {
                        a.submitAndWait(TIMEOUT);
                    } catch (RuntimeException failure) {
                        throw new IllegalStateException("read failed: " + failure.getMessage(), failure);
                    }
                }, n -> { }));
        assertTrue(e.getMessage().contains("read failed"), e.getMessage());
    }
}
