package io.rdma4j.tcp;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The virtual threads one backend started, so that {@code close()} can wait for them and tests can
 * prove none outlives its work. A thread counts as live from {@link #start} until its body
 * returned, before its exit callback runs.
 */
final class TcpThreads {

    private final Set<Thread> live = ConcurrentHashMap.newKeySet();

    /**
     * Starts a virtual thread named {@code name} running {@code body}, then, once it no longer
     * counts as live, {@code onExit} with what the body threw (or {@code null}).
     */
    Thread start(String name, ThrowingRunnable body, ExitCallback onExit) {
        Thread[] self = new Thread[1];
        Thread t = Thread.ofVirtual().name(name).unstarted(() -> {
            Throwable failure = null;
            try {
                body.run();
            } catch (Throwable e) {
                failure = e;
            } finally {
                live.remove(self[0]);
            }
            onExit.exited(failure);
        });
        self[0] = t;
        live.add(t);
        t.start();
        return t;
    }

    /** Threads whose body has not returned yet. */
    int liveCount() {
        return live.size();
    }

    /**
     * Waits up to {@code timeout} for every live thread to end.
     *
     * @return the names of those still running
     */
    List<String> awaitAll(Duration timeout) {
        long end = System.nanoTime() + timeout.toNanos();
        for (Thread t : List.copyOf(live)) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                t.join(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return live.stream().map(Thread::getName).sorted().toList();
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
