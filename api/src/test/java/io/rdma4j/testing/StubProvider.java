package io.rdma4j.testing;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Registered;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.TransportProvider;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongFunction;

/**
 * A test transport that drives the manager's own logic: in-JVM copies between registered
 * segments, and switches to make each step fail, block or never finish. Every call it receives
 * is recorded in {@link #events}.
 */
public final class StubProvider implements TransportProvider {

    /** What {@link Transport#submit} does. */
    public enum SubmitMode {
        COPY, NEVER_COMPLETE, FAIL,
        /** Returns a {@link io.rdma4j.spi.RunOnJoin} future that copies only when a thread calls its {@code runOnJoin()}. */
        RUN_BY_WAITER,
        /**
         * Never completes by itself; its {@code cancel()} stops like a real transport's does, taking
         * its time: it counts down {@link #cancelEntered}, waits for {@link #stopGate}, and only then
         * completes the future as cancelled.
         */
        SLOW_TO_STOP
    }

    /** In {@link SubmitMode#SLOW_TO_STOP}: counted down when a cancel of the transport's future began. */
    public final CountDownLatch cancelEntered = new CountDownLatch(1);
    /** In {@link SubmitMode#SLOW_TO_STOP}: what a cancel waits for before the future completes. */
    public final CountDownLatch stopGate = new CountDownLatch(1);

    private static final ConcurrentHashMap<Long, MemorySegment> SEGMENTS = new ConcurrentHashMap<>();
    private static final AtomicLong HANDLES = new AtomicLong();

    private final String name;
    private final int priority;
    public volatile Availability availability = Availability.available();
    public volatile RuntimeException openFailure;
    public volatile LongFunction<Exception> registerFailure = id -> null;
    public volatile Exception releaseFailure;
    /** Per segment: why this transport cannot serve it ("not applicable"), or {@code null} when it can. */
    public volatile Function<MemorySegment, String> notApplicableTo = segment -> null;
    public volatile SubmitMode submitMode = SubmitMode.COPY;
    /** In {@link SubmitMode#RUN_BY_WAITER}: the threads that ran submits' copies, in order. */
    public final List<Thread> ranOn = Collections.synchronizedList(new ArrayList<>());
    /** The future the last {@code submit} returned. */
    public volatile CompletableFuture<Void> lastSubmit;
    /** When set, {@link Transport#decodeContext} throws it (e.g. PEER_UNREACHABLE: this transport declines the token). */
    public volatile RuntimeException decodeFailure;
    /** Whether the transport prepares local memory (as verbs does); see {@link #prepared} and {@link #closedLocal}. */
    public volatile boolean preparesLocal;
    /** When set, {@code allocate(size, arena)} offers memory from this arena-tied allocator instead of declining. */
    public volatile boolean offersMemory;
    /** Every local segment prepared, in order, by address. */
    public final List<Long> prepared = Collections.synchronizedList(new ArrayList<>());
    /** Every prepared local memory closed, in order, by address. */
    public final List<Long> closedLocal = Collections.synchronizedList(new ArrayList<>());
    /** Per op of the last submit: the address of the prepared local memory it carried, or 0 for none. */
    public volatile List<Long> localMemoryOfLastSubmit = List.of();
    /** The ops list the last submit was given, as given. */
    public volatile List<TransportOp> opsOfLastSubmit = List.of();
    /** Segments this transport allocated, by address. */
    public final List<Long> allocated = Collections.synchronizedList(new ArrayList<>());
    public volatile RuntimeException submitFailure = new TransportException(TransportException.Kind.INTERNAL, "stub submit failed");
    /** When set, register waits for it (after counting down {@link #registerEntered}). */
    public volatile CountDownLatch registerGate;
    public volatile CountDownLatch registerEntered = new CountDownLatch(1);
    public final CountDownLatch openEntered = new CountDownLatch(1);
    /** When set, open waits for it (after counting down {@link #openEntered}). */
    public volatile CountDownLatch openGate;
    public volatile List<Setting<?>> declaredSettings = List.of();
    public final List<String> events = Collections.synchronizedList(new ArrayList<>());
    /** For each released id: whether its segment was still alive when release was called. */
    public final ConcurrentHashMap<Long, Boolean> aliveAtRelease = new ConcurrentHashMap<>();
    /** When set, every event is also appended here as {@code "<name> <event>"}, to see order across transports. */
    public volatile List<String> journal;
    public volatile TransportContext context;
    public volatile Settings settingsSeen;

    public StubProvider(String name, int priority) {
        this.name = name;
        this.priority = priority;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int priority() {
        return priority;
    }

    @Override
    public List<Setting<?>> settings() {
        return declaredSettings;
    }

    @Override
    public Availability availability(Settings settings) {
        settingsSeen = settings;
        return availability;
    }

    @Override
    public Transport open(TransportContext context) throws Exception {
        openEntered.countDown();
        CountDownLatch gate = openGate;
        if (gate != null && !gate.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("open gate never opened");
        }
        if (openFailure != null) {
            throw openFailure;
        }
        this.context = context;
        record("open");
        return new StubTransport();
    }

    private void record(String event) {
        events.add(event);
        List<String> j = journal;
        if (j != null) {
            j.add(name + " " + event);
        }
    }

    /** Events of one kind, e.g. {@code "release"}, as their ids. */
    public List<Long> idsOf(String kind) {
        synchronized (events) {
            return events.stream().filter(e -> e.startsWith(kind + " "))
                    .map(e -> Long.parseLong(e.substring(kind.length() + 1))).toList();
        }
    }

    private final class StubTransport implements Transport {
        private final ConcurrentHashMap<Long, Long> handleById = new ConcurrentHashMap<>();
        private final ConcurrentHashMap<Long, MemorySegment> segmentById = new ConcurrentHashMap<>();

        @Override
        public String name() {
            return name;
        }

        @Override
        public Registered register(long bufferId, MemorySegment segment) throws Exception {
            registerEntered.countDown();
            CountDownLatch gate = registerGate;
            if (gate != null && !gate.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("register gate never opened");
            }
            Exception failure = registerFailure.apply(bufferId);
            record("register " + bufferId);
            String notApplicable = notApplicableTo.apply(segment);
            if (notApplicable != null) {
                return Registered.notApplicable(notApplicable);
            }
            if (failure != null) {
                throw failure;
            }
            long handle = HANDLES.incrementAndGet();
            SEGMENTS.put(handle, segment);
            handleById.put(bufferId, handle);
            segmentById.put(bufferId, segment);
            byte[] ctx = ByteBuffer.allocate(8).putLong(handle).array();
            return preparesLocal ? Registered.context(ctx, new StubLocal(segment, false)) : Registered.context(ctx);
        }

        @Override
        public void release(long bufferId) throws Exception {
            record("release " + bufferId);
            MemorySegment s = segmentById.remove(bufferId);
            if (s != null) {
                aliveAtRelease.put(bufferId, s.scope().isAlive());
            }
            Long handle = handleById.remove(bufferId);
            if (handle != null) {
                SEGMENTS.remove(handle);
            }
            if (releaseFailure != null) {
                throw releaseFailure;
            }
        }

        @Override
        public Object decodeContext(io.rdma4j.spi.RemoteBufferRef remote) {
            RuntimeException failure = decodeFailure;
            if (failure != null) {
                record("decline " + remote.bufferId());
                throw failure;
            }
            return remote.context();
        }

        @Override
        public boolean preparesLocalMemory() {
            return preparesLocal;
        }

        @Override
        public LocalMemory prepareLocal(MemorySegment segment) {
            prepared.add(segment.address());
            return new StubLocal(segment, true);
        }

        @Override
        public MemorySegment allocate(long size, Arena arena) {
            if (!offersMemory) {
                return null;
            }
            MemorySegment s = arena.allocate(size, 4096);
            allocated.add(s.address());
            return s;
        }

        @Override
        public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
            record("submit " + ops.size());
            opsOfLastSubmit = ops;
            localMemoryOfLastSubmit = ops.stream().map(op -> op.localMemory() == null ? 0L
                    : op.localMemory().segment().address()).toList();
            switch (submitMode) {
                case NEVER_COMPLETE:
                    CompletableFuture<Void> pending = new CompletableFuture<>();
                    lastSubmit = pending;
                    return pending;
                case FAIL:
                    return CompletableFuture.failedFuture(submitFailure);
                case RUN_BY_WAITER:
                    RunByWaiter waiting = new RunByWaiter(ops);
                    lastSubmit = waiting;
                    return waiting;
                case SLOW_TO_STOP:
                    CompletableFuture<Void> stopping = new CompletableFuture<>() {
                        @Override
                        public boolean cancel(boolean mayInterruptIfRunning) {
                            cancelEntered.countDown();
                            try {
                                if (!stopGate.await(30, TimeUnit.SECONDS)) {
                                    throw new IllegalStateException("stop gate never opened");
                                }
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                throw new IllegalStateException(e);
                            }
                            return super.cancel(mayInterruptIfRunning);
                        }
                    };
                    lastSubmit = stopping;
                    return stopping;
                default:
                    break;
            }
            return copyAll(ops);
        }

        private CompletableFuture<Void> copyAll(List<TransportOp> ops) {
            for (TransportOp op : ops) {
                long handle = ByteBuffer.wrap(op.remote().context()).getLong();
                MemorySegment remote = SEGMENTS.get(handle);
                if (remote == null) {
                    return CompletableFuture.failedFuture(new TransportException(TransportException.Kind.REMOTE_ACCESS,
                            "buffer " + op.remote().bufferId() + " not found"));
                }
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL) {
                    MemorySegment.copy(remote, op.remoteOffset(), op.local(), 0, op.length());
                } else {
                    MemorySegment.copy(op.local(), 0, remote, op.remoteOffset(), op.length());
                }
            }
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void close() {
            record("close");
        }

        /** A submit nobody runs until a thread calls {@link #runOnJoin()}: then it copies on that thread, once. */
        private final class RunByWaiter extends CompletableFuture<Void> implements io.rdma4j.spi.RunOnJoin {
            private final List<TransportOp> ops;
            private final java.util.concurrent.atomic.AtomicBoolean claimed = new java.util.concurrent.atomic.AtomicBoolean();

            RunByWaiter(List<TransportOp> ops) {
                this.ops = ops;
            }

            @Override
            public void runOnJoin() {
                if (claimed.compareAndSet(false, true)) {
                    ranOn.add(Thread.currentThread());
                    StubTransport.this.copyAll(ops).whenComplete((ok, failure) -> {
                        if (failure == null) {
                            complete(null);
                        } else {
                            completeExceptionally(failure);
                        }
                    });
                }
            }
        }
    }

    /** Prepared local memory; records its closing (registrations' own are never closed by the manager). */
    private final class StubLocal implements LocalMemory {
        private final MemorySegment segment;
        private final boolean prepared;

        StubLocal(MemorySegment segment, boolean prepared) {
            this.segment = segment;
            this.prepared = prepared;
        }

        @Override
        public MemorySegment segment() {
            return segment;
        }

        @Override
        public void close() {
            if (!prepared) {
                throw new AssertionError("the manager closed a registration's local memory");
            }
            closedLocal.add(segment.address());
        }
    }
}
