package io.rdma4j.transport.tcp;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads of one backend: a cached pool of daemon platform threads that run its transfers,
 * its workers, its acceptor and its served connections, each task doing blocking socket I/O.
 *
 * <p>Why platform threads rather than a virtual thread per task: a small transfer is a few
 * microseconds of work between two thread hand-offs, and a virtual thread adds two more to each
 * (the I/O poller wakes it, then a carrier runs it). Measured on loopback, an 8-byte read took
 * ~97 us p50 with a virtual thread per submit and ~60 us with a pooled platform thread
 * ({@code TcpTransferBenchmark.rdmaRead8BLatency}). Idle pool threads end after
 * {@value #KEEP_ALIVE_SECONDS} s, so an idle backend holds none but its acceptor.
 *
 * <p>Tasks are tracked from {@link #start} until their body returned (before the exit callback
 * runs), so that {@code close()} can wait for them and tests can prove none outlives its work.
 */
final class TcpThreads {

    private static final long KEEP_ALIVE_SECONDS = 30;
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final Set<Task> live = ConcurrentHashMap.newKeySet();
    private final ThreadPoolExecutor pool;

    TcpThreads() {
        int poolId = POOLS.incrementAndGet();
        AtomicInteger threadIds = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(0, Integer.MAX_VALUE, KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
                new SynchronousQueue<>(), r -> Thread.ofPlatform().daemon()
                .name("rdma4j-tcp-" + poolId + "-" + threadIds.incrementAndGet()).unstarted(r));
    }

    /**
     * Runs {@code body} on a pool thread, then, once it no longer counts as live, {@code onExit}
     * with what the body threw (or {@code null}). {@code name} says what the task is (diagnostics).
     *
     * @throws java.util.concurrent.RejectedExecutionException after {@link #shutdown()}
     */
    Task start(String name, ThrowingRunnable body, ExitCallback onExit) {
        Task task = new Task(name);
        live.add(task);
        try {
            pool.execute(() -> {
                Throwable failure = null;
                try {
                    body.run();
                } catch (Throwable e) {
                    failure = e;
                } finally {
                    live.remove(task);
                    task.done.countDown();
                }
                onExit.exited(failure);
            });
        } catch (RuntimeException | Error e) {
            live.remove(task);
            task.done.countDown();
            throw e;
        }
        return task;
    }

    /** Tasks whose body has not returned yet. */
    int liveCount() {
        return live.size();
    }

    /**
     * Waits up to {@code timeout} for every live task to end.
     *
     * @return the names of those still running
     */
    List<String> awaitAll(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        for (Task t : List.copyOf(live)) {
            long left = end - System.nanoTime();
            if (left <= 0 || !t.join(Duration.ofNanos(left))) {
                break;
            }
        }
        return live.stream().map(t -> t.name).sorted().toList();
    }

    /** Refuses new tasks; idle pool threads end at once, busy ones when their task returns. */
    void shutdown() {
        pool.shutdown();
    }

    /** A started task. */
    static final class Task {
        private final String name;
        private final CountDownLatch done = new CountDownLatch(1);

        private Task(String name) {
            this.name = name;
        }

        /** Waits for the body to return. */
        void join() throws InterruptedException {
            done.await();
        }

        /** Waits up to {@code timeout}; false when it is still running (or the wait was interrupted). */
        boolean join(Duration timeout) {
            try {
                return done.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }

        @Override
        public String toString() {
            return name;
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @FunctionalInterface
    interface ExitCallback {
        void exited(Throwable failure);
    }

    static final ExitCallback IGNORE = failure -> { };
}
