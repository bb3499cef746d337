package io.rdma4j.transport.tcp;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a process holds that a leak would grow: its open file descriptors (all of them, and those
 * that are sockets) and its platform threads.
 */
record ProcessStats(long openFds, long sockets, int threads) {

    /** This process now, from {@code /proc/self/fd} and the live platform threads. */
    static ProcessStats now() {
        long all = 0;
        long sockets = 0;
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : (Iterable<Path>) fds::iterator) {
                all++;
                try {
                    if (Files.readSymbolicLink(fd).toString().startsWith("socket:")) {
                        sockets++;
                    }
                } catch (IOException closedMeanwhile) {
                    // gone between the listing and the look
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot count open file descriptors (needs Linux /proc)", e);
        }
        return new ProcessStats(all, sockets, Thread.getAllStackTraces().size());
    }

    /** Whether {@code /proc/self/fd} can be read here. */
    static boolean available() {
        return Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** Whether no count is above {@code baseline}'s. */
    boolean notAbove(ProcessStats baseline) {
        return openFds <= baseline.openFds && sockets <= baseline.sockets && threads <= baseline.threads;
    }

    /** The larger of each count. */
    ProcessStats max(ProcessStats other) {
        return new ProcessStats(Math.max(openFds, other.openFds), Math.max(sockets, other.sockets),
                Math.max(threads, other.threads));
    }

    @Override
    public String toString() {
        return openFds + " fds (" + sockets + " sockets), " + threads + " threads";
    }

    /**
     * Samples {@link #now()} on a daemon thread until stopped, then tells how the first and the
     * last tenth of the run compare.
     */
    static final class Sampler implements AutoCloseable {
        private final List<long[]> samples = new ArrayList<>(); // {nanos, fds, sockets, threads}
        private final Thread thread;
        private final long start = System.nanoTime();
        private volatile boolean stopped;

        Sampler(long periodMillis) {
            this.thread = Thread.ofPlatform().daemon().name("stats-sampler").start(() -> {
                while (!stopped) {
                    ProcessStats s = now();
                    synchronized (samples) {
                        samples.add(new long[] {System.nanoTime() - start, s.openFds, s.sockets, s.threads});
                    }
                    try {
                        Thread.sleep(periodMillis); // the sampling period, not a synchronisation
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        /** Stops sampling; the highest counts of the first and of the last tenth of the samples' time span. */
        Growth stop() throws InterruptedException {
            stopped = true;
            thread.interrupt();
            thread.join();
            synchronized (samples) {
                // Tenths of the span the samples cover (a loaded machine may take a while for the first
                // one); the first sample always counts for the first tenth, the last for the last.
                long from = samples.getFirst()[0];
                long to = samples.getLast()[0];
                long tenth = (to - from) / 10;
                ProcessStats first = new ProcessStats(0, 0, 0);
                ProcessStats last = new ProcessStats(0, 0, 0);
                for (long[] s : samples) {
                    ProcessStats p = new ProcessStats(s[1], s[2], (int) s[3]);
                    if (s[0] <= from + tenth) {
                        first = first.max(p);
                    }
                    if (s[0] >= to - tenth) {
                        last = last.max(p);
                    }
                }
                return new Growth(first, last, samples.size());
            }
        }

        @Override
        public void close() throws InterruptedException {
            if (!stopped) {
                stop();
            }
        }
    }

    /** Highest counts in the first and the last tenth of a run. */
    record Growth(ProcessStats firstTenth, ProcessStats lastTenth, int samples) {
        /**
         * How far the last tenth may go above the first: the transport's cached thread and
         * connection pools grow to the highest concurrency the run reaches, and a random run may
         * reach it late, by a thread or a connection. A leak grows with the number of ops
         * (tens of thousands in ten seconds), not by one or two.
         */
        static final int POOL_SLACK = 2;

        boolean grew() {
            return lastTenth.openFds() > firstTenth.openFds() + POOL_SLACK
                    || lastTenth.sockets() > firstTenth.sockets() + POOL_SLACK
                    || lastTenth.threads() > firstTenth.threads() + POOL_SLACK;
        }

        @Override
        public String toString() {
            return "first tenth max " + firstTenth + ", last tenth max " + lastTenth + " (" + samples + " samples)";
        }
    }
}
