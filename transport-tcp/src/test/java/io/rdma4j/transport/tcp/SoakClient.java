package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;

/**
 * The client half of the soak test, run in each of the two processes: {@code threads} threads
 * doing random reads and writes, whole buffers, prefixes and slices at random offsets, single ops and
 * batches, on remote buffers. Each remote buffer belongs to one thread, which keeps a mirror of
 * what it last wrote there; every read is checked against it by CRC32C. An op that fails or
 * does not complete within its deadline counts as lost.
 */
final class SoakClient {

    private static final Duration OP_TIMEOUT = Duration.ofSeconds(30);

    /** What a run did. {@code problems} holds the first few failures and corruptions, described. */
    record Result(long ops, long bytes, long corruptions, long lost, List<String> problems, ProcessStats.Growth growth) {
        /** One line, for the peer process's answer. */
        String line() {
            return "SOAK ops=" + ops + " bytes=" + bytes + " corruptions=" + corruptions + " lost=" + lost
                    + " fdsFirst=" + growth.firstTenth().openFds() + " fdsLast=" + growth.lastTenth().openFds()
                    + " socketsFirst=" + growth.firstTenth().sockets() + " socketsLast=" + growth.lastTenth().sockets()
                    + " threadsFirst=" + growth.firstTenth().threads() + " threadsLast=" + growth.lastTenth().threads()
                    + " problems=" + String.join(" | ", problems).replace('\n', ' ');
        }
    }

    private final RdmaManager manager;
    private final List<RdmaRemoteBuffer> remotes;
    private final int threads;
    private final long seed;
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong corruptions = new AtomicLong();
    private final AtomicLong lost = new AtomicLong();
    private final List<String> problems = Collections.synchronizedList(new ArrayList<>());

    SoakClient(RdmaManager manager, List<RdmaRemoteBuffer> remotes, int threads, long seed) {
        this.manager = manager;
        this.remotes = remotes;
        this.threads = threads;
        this.seed = seed;
    }

    /** Runs for {@code duration} after a warm-up of a tenth of it (also loaded, not sampled). */
    Result run(Duration duration) throws InterruptedException {
        long warmUpEnd = System.nanoTime() + duration.toNanos() / 10;
        long end = warmUpEnd + duration.toNanos();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            List<RdmaRemoteBuffer> mine = new ArrayList<>();
            for (int i = t; i < remotes.size(); i += threads) {
                mine.add(remotes.get(i));
            }
            Random random = new Random(seed * 1_000_003L + t);
            workers.add(Thread.ofPlatform().name("soak-client-" + t).start(() -> work(mine, random, end)));
        }
        long untilWarm = warmUpEnd - System.nanoTime();
        if (untilWarm > 0) {
            TimeUnit.NANOSECONDS.sleep(untilWarm); // the load runs meanwhile; sampling starts after
        }
        ProcessStats.Growth growth;
        try (ProcessStats.Sampler sampler = new ProcessStats.Sampler(50)) {
            for (Thread w : workers) {
                w.join();
            }
            growth = sampler.stop();
        }
        return new Result(ops.get(), bytes.get(), corruptions.get(), lost.get(), List.copyOf(problems), growth);
    }

    private void work(List<RdmaRemoteBuffer> mine, Random random, long end) {
        long largest = mine.stream().mapToLong(RdmaRemoteBuffer::size).max().orElse(1);
        byte[][] mirrors = new byte[mine.size()][];
        try (Arena arena = Arena.ofShared()) {
            MemorySegment[] scratch = {arena.allocate(largest, 8), arena.allocate(largest, 8), arena.allocate(largest, 8)};
            // Every buffer is written whole once, so that every later read has something to be checked against.
            for (int i = 0; i < mine.size(); i++) {
                mirrors[i] = new byte[(int) mine.get(i).size()];
                write(mine.get(i), mirrors[i], 0, mine.get(i).size(), scratch[0], random);
            }
            while (System.nanoTime() - end < 0) {
                if (random.nextInt(5) == 0) {
                    batch(mine, mirrors, scratch, random);
                    continue;
                }
                int i = random.nextInt(mine.size());
                long size = mine.get(i).size();
                long offset = random.nextInt(3) == 0 ? (long) (random.nextDouble() * size) : 0;
                long length = random.nextBoolean() ? size - offset : 1 + (long) (random.nextDouble() * (size - offset));
                if (random.nextBoolean()) {
                    write(mine.get(i), mirrors[i], offset, length, scratch[0], random);
                } else {
                    read(mine.get(i), mirrors[i], offset, length, scratch[0], random);
                }
            }
        }
    }

    /**
     * The token for bytes {@code [offset, offset + length)} of {@code remote}: a slice, or, for a
     * prefix, half of the time the whole token (the prefix rule then moves just those bytes).
     */
    private static RdmaRemoteBuffer range(RdmaRemoteBuffer remote, long offset, long length, Random random) {
        if (offset == 0 && (length == remote.size() || random.nextBoolean())) {
            return remote;
        }
        if (random.nextInt(4) == 0) {
            return remote.slice(0, offset + length).slice(offset, length); // the same range, as a slice of a slice
        }
        return remote.slice(offset, length);
    }

    /** Writes {@code length} random bytes at {@code offset} of {@code remote}. */
    private void write(RdmaRemoteBuffer remote, byte[] mirror, long offset, long length, MemorySegment scratch, Random random) {
        MemorySegment local = fill(scratch, length, random);
        RdmaRemoteBuffer target = range(remote, offset, length, random);
        if (complete(manager.write(target, local, OP_TIMEOUT), "write", target, length)) {
            MemorySegment.copy(local, ValueLayout.JAVA_BYTE, 0, mirror, (int) offset, (int) length);
        }
    }

    /** Reads {@code length} bytes at {@code offset} of {@code remote} and checks them against the mirror. */
    private void read(RdmaRemoteBuffer remote, byte[] mirror, long offset, long length, MemorySegment scratch, Random random) {
        RdmaRemoteBuffer source = range(remote, offset, length, random);
        if (source == remote && length < remote.size()) {
            source = remote.slice(0, length); // a read moves the whole token's range: name just the prefix
        }
        MemorySegment local = scratch.asSlice(0, length);
        if (complete(manager.read(source, local, OP_TIMEOUT), "read", source, length)) {
            check(source, mirror, offset, local, length);
        }
    }

    /** Two or three ops on distinct buffers, in one action: writes, then reads of other buffers. */
    private void batch(List<RdmaRemoteBuffer> mine, byte[][] mirrors, MemorySegment[] scratch, Random random) {
        int n = Math.min(mine.size(), 2 + random.nextInt(2));
        List<Integer> picked = new ArrayList<>();
        while (picked.size() < n) {
            int i = random.nextInt(mine.size());
            if (!picked.contains(i)) {
                picked.add(i);
            }
        }
        var action = manager.newAction();
        long total = 0;
        boolean[] isWrite = new boolean[n];
        MemorySegment[] locals = new MemorySegment[n];
        for (int k = 0; k < n; k++) {
            RdmaRemoteBuffer remote = mine.get(picked.get(k));
            isWrite[k] = random.nextBoolean();
            total += remote.size();
            if (isWrite[k]) {
                locals[k] = fill(scratch[k], remote.size(), random);
                action.writeFrom(remote, locals[k]);
            } else {
                locals[k] = scratch[k].asSlice(0, remote.size());
                action.readInto(remote, locals[k]);
            }
        }
        if (complete(action.submit(OP_TIMEOUT), "batch of " + n, mine.get(picked.getFirst()), total)) {
            for (int k = 0; k < n; k++) {
                int i = picked.get(k);
                if (isWrite[k]) {
                    MemorySegment.copy(locals[k], ValueLayout.JAVA_BYTE, 0, mirrors[i], 0, mirrors[i].length);
                } else {
                    check(mine.get(i), mirrors[i], 0, locals[k], mirrors[i].length);
                }
            }
        }
    }

    private static MemorySegment fill(MemorySegment scratch, long length, Random random) {
        MemorySegment local = scratch.asSlice(0, length);
        long i = 0;
        for (; i + 8 <= length; i += 8) {
            local.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (; i < length; i++) {
            local.set(ValueLayout.JAVA_BYTE, i, (byte) random.nextInt());
        }
        return local;
    }

    private void check(RdmaRemoteBuffer remote, byte[] mirror, long offset, MemorySegment local, long length) {
        CRC32C expected = new CRC32C();
        expected.update(mirror, (int) offset, (int) length);
        CRC32C actual = new CRC32C();
        actual.update(local.asSlice(0, length).asByteBuffer());
        if (expected.getValue() != actual.getValue()) {
            corruptions.incrementAndGet();
            problem("corruption: read of " + length + " bytes of " + remote + " has CRC32C " + Long.toHexString(actual.getValue())
                    + ", expected " + Long.toHexString(expected.getValue()));
        }
    }

    /** Waits for {@code f}; counts it, or counts it lost. */
    private boolean complete(java.util.concurrent.CompletableFuture<Void> f, String what, RdmaRemoteBuffer remote, long length) {
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

    private void problem(String description) {
        if (problems.size() < 5) {
            problems.add(description);
        }
    }
}
