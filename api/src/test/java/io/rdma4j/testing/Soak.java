package io.rdma4j.testing;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * A soak over one transport between two managers of this JVM: {@code threads} holder threads read
 * and write buffers of the owner at random, of mixed sizes (8 B to 1 MiB and odd sizes between),
 * whole, by prefix and by slice, one op or two to three in one action, every op required to go
 * over the transport under test. Each thread owns its buffers and keeps a mirror of what it last
 * wrote there; every read is checked against it by CRC32C. In the middle of the run the buffers
 * change: a thread now and then releases one of its buffers and registers a new one in its place
 * (allocated by the manager, or the caller's memory registered, in turn), and now and then closes
 * the arena of its own local memory and continues in a new one (so that the holder's prepared
 * local memory of the old one must go). An op that fails or does not end within its deadline
 * counts as lost.
 *
 * <p>Resources: a {@link Probe} is sampled once every thread has its buffers and the run has warmed
 * up for a tenth of its length ({@code start}), and again when every thread has stopped, its
 * buffers still registered ({@code end}); the test compares them.
 */
public final class Soak {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(30);
    private static final int BUFFERS_PER_THREAD = 4;
    /** Buffer sizes, drawn at random: mostly small, some large, odd sizes among them. */
    private static final long[] SIZES = {8, 64, 100, 4096, 4097, 65_536, 65_537 * 3, 1 << 20, (1 << 20) + 13};

    /** A sample of resources, by name, e.g. {@code threads=12, fds=40, rxe0.mr=9}. */
    @FunctionalInterface
    public interface Probe {
        Map<String, Long> sample() throws Exception;
    }

    /** What a run did; {@code problems} holds the first few failures and corruptions, described. */
    public record Result(long ops, long bytes, long corruptions, long lost, long reRegistrations, long localRenewals,
                         List<String> problems, Map<String, Long> start, Map<String, Long> end) {
        public String line() {
            return "ops=" + ops + " bytes=" + bytes + " corruptions=" + corruptions + " lost=" + lost
                    + " reRegistrations=" + reRegistrations + " localRenewals=" + localRenewals
                    + " start=" + start + " end=" + end + " problems=" + problems;
        }
    }

    private final RdmaManager owner;
    private final RdmaManager holder;
    private final String transport;
    private final int threads;
    private final long seed;
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong corruptions = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong reRegistrations = new AtomicLong();
    private final AtomicLong localRenewals = new AtomicLong();
    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());

    /**
     * @param owner     the manager whose buffers are read and written
     * @param holder    the manager that reads and writes them
     * @param transport the transport every op must take ({@link RdmaAction#requireTransport})
     */
    public Soak(RdmaManager owner, RdmaManager holder, String transport, int threads, long seed) {
        this.owner = owner;
        this.holder = holder;
        this.transport = transport;
        this.threads = threads;
        this.seed = seed;
    }

    /** Runs for {@code duration} after a warm-up of a tenth of it (loaded too, before {@code start} is sampled). */
    public Result run(Duration duration, Probe probe) throws Exception {
        long warmUpEnd = System.nanoTime() + duration.toNanos() / 10;
        long end = warmUpEnd + duration.toNanos();
        CountDownLatch ready = new CountDownLatch(threads);
        CountDownLatch stopped = new CountDownLatch(threads);
        CountDownLatch sampledEnd = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random random = new Random(seed * 1_000_003L + t);
            workers.add(Thread.ofPlatform().name("soak-" + t).start(() -> new Worker(random).run(end, ready, stopped, sampledEnd)));
        }
        Map<String, Long> start;
        Map<String, Long> last;
        try {
            ready.await();
            long untilWarm = warmUpEnd - System.nanoTime();
            if (untilWarm > 0) {
                TimeUnit.NANOSECONDS.sleep(untilWarm); // the load runs meanwhile: a time to run for, not a wait
            }
            start = probe.sample();
            stopped.await();
            last = probe.sample();
        } finally {
            sampledEnd.countDown();
            for (Thread w : workers) {
                w.join();
            }
        }
        return new Result(ops.get(), bytes.get(), corruptions.get(), lost.get(), reRegistrations.get(), localRenewals.get(),
                List.copyOf(problems), start, last);
    }

    /** One of the owner's buffers as a holder thread knows it. */
    private static final class Slot {
        RdmaRemoteBuffer remote;
        Arena arena;          // the caller's memory the owner registered, or null for an allocated buffer
        byte[] mirror;
    }

    private final class Worker {
        private final Random random;
        private Arena local = Arena.ofShared();
        private MemorySegment[] scratch = new MemorySegment[3];
        private final Slot[] slots = new Slot[BUFFERS_PER_THREAD];
        private boolean registerNext;

        Worker(Random random) {
            this.random = random;
            registerNext = random.nextBoolean();
            allocateScratch();
        }

        private void allocateScratch() {
            for (int i = 0; i < scratch.length; i++) {
                scratch[i] = local.allocate(SIZES[SIZES.length - 1], 8);
            }
        }

        void run(long end, CountDownLatch ready, CountDownLatch stopped, CountDownLatch sampledEnd) {
            try {
                try {
                    for (int i = 0; i < slots.length; i++) {
                        slots[i] = new Slot();
                        fresh(slots[i]);
                    }
                } finally {
                    ready.countDown();
                }
                while (System.nanoTime() - end < 0) {
                    int pick = random.nextInt(1000);
                    if (pick < 8) {
                        Slot s = slots[random.nextInt(slots.length)];
                        releaseAndForget(s);
                        fresh(s);
                        reRegistrations.incrementAndGet();
                    } else if (pick < 10) {
                        local.close();     // no op of this thread is in flight: its memory goes back to the system
                        local = Arena.ofShared();
                        allocateScratch();
                        localRenewals.incrementAndGet();
                    } else if (pick < 200) {
                        batch();
                    } else {
                        Slot s = slots[random.nextInt(slots.length)];
                        long size = s.mirror.length;
                        long offset = random.nextInt(3) == 0 ? (long) (random.nextDouble() * size) : 0;
                        long length = random.nextBoolean() ? size - offset : 1 + (long) (random.nextDouble() * (size - offset));
                        if (length == 0) {
                            continue;
                        }
                        if (random.nextBoolean()) {
                            write(s, offset, length);
                        } else {
                            read(s, offset, length);
                        }
                    }
                }
            } catch (Throwable t) {
                lost.incrementAndGet();
                problem("soak thread " + Thread.currentThread().getName() + " died: " + t);
            } finally {
                stopped.countDown();
            }
            try {
                sampledEnd.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            for (Slot s : slots) {
                if (s != null && s.remote != null) {
                    releaseAndForget(s);
                }
            }
            local.close();
        }

        /** A new buffer for {@code s}, allocated or registered in turn, written whole once. */
        private void fresh(Slot s) {
            long size = SIZES[random.nextInt(SIZES.length)];
            if (registerNext) {
                s.arena = Arena.ofShared();
                s.remote = owner.register(s.arena.allocate(size, 8)).join();
            } else {
                s.arena = null;
                RdmaBuffer b = owner.allocate(size).join();
                s.remote = b.remote();
            }
            registerNext = !registerNext;
            s.mirror = new byte[(int) size];
            write(s, 0, size);
        }

        private void releaseAndForget(Slot s) {
            owner.release(s.remote).join();
            if (s.arena != null) {
                s.arena.close();
            }
            s.remote = null;
            s.arena = null;
        }

        private RdmaRemoteBuffer range(Slot s, long offset, long length) {
            if (offset == 0 && length == s.mirror.length && random.nextBoolean()) {
                return s.remote;
            }
            return s.remote.slice(offset, length);
        }

        private void write(Slot s, long offset, long length) {
            MemorySegment data = fill(scratch[0], length);
            RdmaAction a = holder.newAction().requireTransport(transport).writeFrom(range(s, offset, length), data);
            if (complete(a.submit(OP_TIMEOUT), "write of " + length + " B at " + offset, s.remote, length)) {
                MemorySegment.copy(data, ValueLayout.JAVA_BYTE, 0, s.mirror, (int) offset, (int) length);
            }
        }

        private void read(Slot s, long offset, long length) {
            MemorySegment into = scratch[0].asSlice(0, length);
            into.fill((byte) 0x5a);
            RdmaAction a = holder.newAction().requireTransport(transport).readInto(range(s, offset, length), into);
            if (complete(a.submit(OP_TIMEOUT), "read of " + length + " B at " + offset, s.remote, length)) {
                check(s, offset, into);
            }
        }

        /** Two or three ops on distinct buffers of this thread, whole buffers, in one action. */
        private void batch() {
            int n = 2 + random.nextInt(2);
            List<Integer> picked = new ArrayList<>();
            while (picked.size() < n) {
                int i = random.nextInt(slots.length);
                if (!picked.contains(i)) {
                    picked.add(i);
                }
            }
            RdmaAction action = holder.newAction().requireTransport(transport);
            boolean[] isWrite = new boolean[n];
            MemorySegment[] locals = new MemorySegment[n];
            long total = 0;
            for (int k = 0; k < n; k++) {
                Slot s = slots[picked.get(k)];
                isWrite[k] = random.nextBoolean();
                total += s.mirror.length;
                if (isWrite[k]) {
                    locals[k] = fill(scratch[k], s.mirror.length);
                    action.writeFrom(s.remote, locals[k]);
                } else {
                    locals[k] = scratch[k].asSlice(0, s.mirror.length);
                    locals[k].fill((byte) 0x5a);
                    action.readInto(s.remote, locals[k]);
                }
            }
            if (complete(action.submit(OP_TIMEOUT), "batch of " + n, slots[picked.getFirst()].remote, total)) {
                for (int k = 0; k < n; k++) {
                    Slot s = slots[picked.get(k)];
                    if (isWrite[k]) {
                        MemorySegment.copy(locals[k], ValueLayout.JAVA_BYTE, 0, s.mirror, 0, s.mirror.length);
                    } else {
                        check(s, 0, locals[k]);
                    }
                }
            }
        }

        private MemorySegment fill(MemorySegment into, long length) {
            MemorySegment data = into.asSlice(0, length);
            long i = 0;
            for (; i + 8 <= length; i += 8) {
                data.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
            }
            for (; i < length; i++) {
                data.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
            }
            return data;
        }

        private void check(Slot s, long offset, MemorySegment got) {
            CRC32C expected = new CRC32C();
            expected.update(s.mirror, (int) offset, (int) got.byteSize());
            CRC32C actual = new CRC32C();
            actual.update(got.asByteBuffer());
            if (expected.getValue() != actual.getValue()) {
                corruptions.incrementAndGet();
                problem("corruption: read of " + got.byteSize() + " B at " + offset + " of " + s.remote + " has CRC32C "
                        + Long.toHexString(actual.getValue()) + ", expected " + Long.toHexString(expected.getValue()));
            }
        }

        private boolean complete(CompletableFuture<Void> f, String what, RdmaRemoteBuffer remote, long length) {
            try {
                f.get(OP_TIMEOUT.toSeconds() + 30, TimeUnit.SECONDS);
                ops.incrementAndGet();
                bytes.addAndGet(length);
                return true;
            } catch (Exception e) {
                lost.incrementAndGet();
                Throwable t = e.getCause() != null ? e.getCause() : e;
                problem("lost " + what + " of " + remote + ": " + t);
                return false;
            }
        }
    }

    /** The names of this process's platform threads, digits folded, counted ("rdma4j-verbs-poller-#: 2"): what a thread count is made of. */
    public static Map<String, Long> threadNames() {
        Map<String, Long> names = new TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            names.merge(t.getName().replaceAll("\\d+", "#"), 1L, Long::sum);
        }
        return names;
    }

    /**
     * Opens and closes what a first soak opens in a JVM once and keeps (the JDK's pollers for
     * virtual threads, its random sources, class loading): a short soak of two threads between
     * {@code owner} and {@code holder}, which the caller then closes. Run before sampling the
     * process's resources for a later comparison.
     */
    public static void warmUp(RdmaManager owner, RdmaManager holder, String transport) throws Exception {
        Result r = new Soak(owner, holder, transport, 2, 1).run(Duration.ofMillis(500), Map::of);
        if (r.lost() > 0 || r.corruptions() > 0) {
            throw new AssertionError("the warm-up soak failed: " + r.line());
        }
    }

    /**
     * Waits until no thread of a manager ({@code rdma4j-*}) is left, at most {@code bound}: call it
     * after closing every manager, before sampling the resources of a process without one.
     */
    public static void awaitNoManagerThreads(Duration bound) throws InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        while (Thread.getAllStackTraces().keySet().stream().anyMatch(t -> t.getName().startsWith("rdma4j-"))) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("manager threads still running " + bound.toSeconds() + " s after close: " + threadNames());
            }
            Thread.sleep(20);
        }
    }

    private void problem(String description) {
        if (problems.size() < 5) {
            problems.add(description);
        }
    }

    /**
     * This process's platform threads (fork-join pools' workers left out, the common pool's and the
     * carriers of virtual threads, and the reapers of child processes: the JDK starts and ends
     * them on its own), and its open file descriptors other than files read from disk (class path
     * jars, libraries), by kind: {@code fds.socket}, {@code fds.anon_inode:[...]}, {@code fds./dev/...},
     * {@code fds.memfd}, {@code fds.pipe}.
     */
    public static Map<String, Long> processResources() throws IOException {
        Map<String, Long> r = new TreeMap<>();
        r.put("threads", Thread.getAllStackTraces().keySet().stream()
                .filter(t -> !t.getName().matches("ForkJoinPool.*-worker-\\d+|process reaper")).count());
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            for (Path fd : fds.toList()) {
                String target;
                try {
                    target = Files.readSymbolicLink(fd).toString();
                } catch (IOException e) {
                    continue;     // the directory stream's own descriptor, closed meanwhile
                }
                String kind = target.startsWith("socket:") ? "socket"
                        : target.startsWith("pipe:") ? "pipe"
                        : target.startsWith("/memfd:") ? "memfd"
                        : target.startsWith("anon_inode:") || target.startsWith("/dev/") ? target
                        : null;
                if (kind != null) {
                    r.merge("fds." + kind, 1L, Long::sum);
                }
            }
        }
        return r;
    }
}
