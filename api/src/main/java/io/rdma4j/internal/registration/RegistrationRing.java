package io.rdma4j.internal.registration;

import com.lmax.disruptor.EventHandler;
import com.lmax.disruptor.ExceptionHandler;
import com.lmax.disruptor.PhasedBackoffWaitStrategy;
import com.lmax.disruptor.RingBuffer;
import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.WaitStrategy;
import com.lmax.disruptor.dsl.Disruptor;
import com.lmax.disruptor.dsl.ProducerType;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaTimeoutException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * A Disruptor ring with one consumer thread that runs every register, release and close request
 * of one manager, in publication order. The consumer is the single writer of the registration
 * table, so a release and a registration of the same id never interleave, and callers never wait
 * for slow native registration: they publish and get a future.
 *
 * <pre>
 *   caller threads --tryPublish--&gt; [ ring of N slots ] --&gt; consumer thread "rdma4j-registration-<control port>"
 *   (many producers)                                      Worker.register / release / close
 * </pre>
 *
 * <p>Back-pressure: a caller finding the ring full waits, in arrival order, for a slot to free up,
 * at most the queue timeout, then gets an {@link RdmaTimeoutException} saying so. Slots are
 * counted by a fair semaphore with one permit per slot: a permit is taken before publishing and
 * given back once the consumer finished the request and freed its slot, so a caller holding a
 * permit always finds a slot. {@link #close} always gets through, runs after every request
 * published before it, wakes every waiting caller (they fail as closed), and any request that
 * raced past it fails with the worker's closed error.
 */
public final class RegistrationRing implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(RegistrationRing.class.getName());

    /** What the consumer thread runs; implemented by the manager. */
    public interface Worker {
        void register(MemorySegment segment, Arena ownedArena, CompletableFuture<Object> result);

        void release(long id, CompletableFuture<Object> result);

        void close(CompletableFuture<Object> result);
    }

    private enum Kind { REGISTER, RELEASE, CLOSE }

    private static final class Event {
        Kind kind;
        MemorySegment segment;
        Arena arena;
        long id;
        CompletableFuture<Object> result;

        void clear() {
            kind = null;
            segment = null;
            arena = null;
            result = null;
        }
    }

    private final Disruptor<Event> disruptor;
    private final RingBuffer<Event> ring;
    private final Worker worker;
    private final Semaphore slots;
    private final Duration queueTimeout;
    private final long queueTimeoutNanos;
    private final ReentrantReadWriteLock gate = new ReentrantReadWriteLock();
    private boolean closed; // guarded by gate
    private volatile Thread consumer;

    /**
     * Starts the consumer thread.
     *
     * @param size         slots, a power of two
     * @param queueTimeout how long a caller waits for a slot when the ring is full
     * @param threadName   the consumer thread's name
     * @param worker       what the consumer runs
     */
    public RegistrationRing(int size, Duration queueTimeout, String threadName, Worker worker) {
        this.worker = worker;
        this.slots = new Semaphore(size, true);
        this.queueTimeout = queueTimeout;
        long nanos;
        try {
            nanos = queueTimeout.toNanos();
        } catch (ArithmeticException tooLong) {
            nanos = Long.MAX_VALUE;
        }
        this.queueTimeoutNanos = nanos;
        this.disruptor = new Disruptor<>(Event::new, size, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            consumer = t;
            return t;
        }, ProducerType.MULTI, waitStrategy());
        disruptor.handleEventsWith(new Handler());
        disruptor.setDefaultExceptionHandler(new LoggingExceptionHandler());
        this.ring = disruptor.start();
    }

    /**
     * After an event the consumer spins for {@value #SPIN_MICROS} us, then yields until
     * {@value #YIELD_MICROS} us, then blocks on a lock: a burst of registrations is picked up
     * without a wake-up each, and an idle manager burns no CPU. Measured with
     * {@code RegistrationRingBenchmark.registerAndJoin} (register, wait, release, one at a time) on
     * 2 cores: ~38k ops/s with a plain BlockingWaitStrategy, ~69k with this one. Disruptor's
     * lite-lock variant measured faster still (~240k) but its author calls it experimental; a lost
     * wake-up here would stall registrations, so it is not used.
     */
    private static final long SPIN_MICROS = 20;
    private static final long YIELD_MICROS = 100;

    private static WaitStrategy waitStrategy() {
        return PhasedBackoffWaitStrategy.withLock(SPIN_MICROS, YIELD_MICROS, TimeUnit.MICROSECONDS);
    }

    /** The consumer thread (diagnostics, tests). */
    public Thread consumerThread() {
        return consumer;
    }

    /** Whether the caller runs on the consumer thread. */
    public boolean isConsumerThread() {
        return Thread.currentThread() == consumer;
    }

    /**
     * Queues a registration; the future is completed by the worker. Waits while the ring is full.
     *
     * @throws IllegalStateException when the ring is closed
     * @throws RdmaTimeoutException  when no slot freed up within the queue timeout
     * @throws RdmaException         when interrupted while waiting, or called on the consumer
     *                               thread while the ring is full (it cannot wait for itself)
     */
    public void register(MemorySegment segment, Arena ownedArena, CompletableFuture<Object> result) {
        publish(Kind.REGISTER, segment, ownedArena, -1, result);
    }

    /** Queues a release; the future is completed by the worker. Waits and fails as {@link #register} does. */
    public void release(long id, CompletableFuture<Object> result) {
        publish(Kind.RELEASE, null, null, id, result);
    }

    private void publish(Kind kind, MemorySegment segment, Arena arena, long id, CompletableFuture<Object> result) {
        if (isClosed()) {
            throw new IllegalStateException("closed");
        }
        acquireSlot(kind);
        gate.readLock().lock();
        try {
            if (closed) {
                slots.release();
                throw new IllegalStateException("closed");
            }
            // Holding a permit, a slot is free: the consumer frees a slot before giving its permit back.
            ring.publishEvent((e, seq) -> {
                e.kind = kind;
                e.segment = segment;
                e.arena = arena;
                e.id = id;
                e.result = result;
            });
        } finally {
            gate.readLock().unlock();
        }
    }

    private void acquireSlot(Kind kind) {
        if (slots.tryAcquire()) {
            return;
        }
        String what = kind == Kind.REGISTER ? "register" : "release";
        if (isConsumerThread()) {
            throw new RdmaException("registration queue full (" + ring.getBufferSize() + " requests pending), and this "
                    + what + " was called on the registration thread, which cannot wait for itself");
        }
        try {
            if (!slots.tryAcquire(queueTimeoutNanos, TimeUnit.NANOSECONDS)) {
                throw new RdmaTimeoutException(null, "registration queue full: " + ring.getBufferSize() + " register/release "
                        + "requests stayed pending for " + queueTimeout + " (rdma.registration.queueTimeout), so this "
                        + what + " was not queued; raise rdma.registration.queueTimeout or rdma.registrationRingSize", null);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RdmaException("interrupted while waiting for room in the registration queue; the " + what
                    + " was not queued", e);
        }
    }

    /** How many register, release and close requests are queued or running now. */
    public int pending() {
        return ring.getBufferSize() - slots.availablePermits();
    }

    /** How many requests the ring holds. */
    public int capacity() {
        return ring.getBufferSize();
    }

    /** Whether {@link #close} has begun; after it, publishing throws {@link IllegalStateException}. */
    public boolean isClosed() {
        gate.readLock().lock();
        try {
            return closed;
        } finally {
            gate.readLock().unlock();
        }
    }

    /**
     * Runs the worker's close after every request published so far, then stops the consumer
     * thread. Idempotent; must not be called from the consumer thread.
     *
     * @return the worker's close future (already complete on a second call)
     */
    public CompletableFuture<Object> closeAsync() {
        CompletableFuture<Object> done = new CompletableFuture<>();
        gate.writeLock().lock();
        try {
            if (closed) {
                return CompletableFuture.completedFuture(null);
            }
            closed = true;
            // Wake every caller waiting for a slot: each sees the ring closed and gives its permit back.
            slots.release(WAKE_ALL);
            // Blocking publish: the consumer is draining, so a slot frees up.
            ring.publishEvent((e, seq) -> {
                e.kind = Kind.CLOSE;
                e.result = done;
            });
        } finally {
            gate.writeLock().unlock();
        }
        return done;
    }

    @Override
    public void close() {
        if (isConsumerThread()) {
            throw new IllegalStateException("the registration ring cannot be closed from its own thread");
        }
        closeAsync().join();
        disruptor.shutdown();
    }

    /** Permits that wake every waiting caller at close, far below the semaphore's limit. */
    private static final int WAKE_ALL = 1 << 29;

    /** Runs each request, then frees its slot at once (not at the end of the batch) and gives back its permit. */
    private final class Handler implements EventHandler<Event> {
        private Sequence consumed;

        @Override
        public void setSequenceCallback(Sequence sequenceCallback) {
            this.consumed = sequenceCallback;
        }

        @Override
        public void onEvent(Event e, long sequence, boolean endOfBatch) {
            boolean holdsPermit = e.kind != Kind.CLOSE;
            RegistrationRing.this.onEvent(e);
            consumed.set(sequence);
            if (holdsPermit) {
                slots.release();
            }
        }
    }

    private void onEvent(Event e) {
        try {
            switch (e.kind) {
                case REGISTER -> worker.register(e.segment, e.arena, e.result);
                case RELEASE -> worker.release(e.id, e.result);
                case CLOSE -> worker.close(e.result);
            }
        } catch (Throwable t) {
            // The worker completes its futures itself; this is the last line of defence so that
            // a bug never leaves a caller waiting or kills the consumer thread.
            LOG.log(System.Logger.Level.ERROR, "registration worker failed on " + e.kind, t);
            e.result.completeExceptionally(t);
            if (e.arena != null) {
                e.arena.close();
            }
        } finally {
            e.clear();
        }
    }

    private static final class LoggingExceptionHandler implements ExceptionHandler<Event> {
        @Override
        public void handleEventException(Throwable ex, long sequence, Event event) {
            LOG.log(System.Logger.Level.ERROR, "registration ring event " + sequence + " failed", ex);
        }

        @Override
        public void handleOnStartException(Throwable ex) {
            LOG.log(System.Logger.Level.ERROR, "registration ring failed to start", ex);
        }

        @Override
        public void handleOnShutdownException(Throwable ex) {
            LOG.log(System.Logger.Level.ERROR, "registration ring failed to stop", ex);
        }
    }
}
