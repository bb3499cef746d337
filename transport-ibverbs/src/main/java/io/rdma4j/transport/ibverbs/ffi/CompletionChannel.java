package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_COMP_CHANNEL;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * A completion channel ({@code struct ibv_comp_channel}): lets a poller park until a completion
 * queue it {@linkplain CompletionQueue#requestNotification armed} gets a completion, instead of
 * spinning. Owned by its {@link VerbsContext}. The usual loop: arm, poll once more (a completion
 * may have arrived before arming), then {@link #awaitEvent} if nothing was found.
 */
public final class CompletionChannel implements AutoCloseable {

    private static final short POLLIN = 1;

    private final VerbsContext context;
    private final MemorySegment channel;
    private final int fd;
    private final AtomicBoolean closed = new AtomicBoolean();

    private CompletionChannel(VerbsContext context, MemorySegment channel) {
        this.context = context;
        this.channel = channel;
        this.fd = channel.get(JAVA_INT, offset(IBV_COMP_CHANNEL, "fd"));
    }

    static CompletionChannel create(VerbsContext context) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment ch = (MemorySegment) IbvFunctions.CREATE_COMP_CHANNEL.invokeExact(state, context.pointer());
            return new CompletionChannel(context, Calls.checkPointer("ibv_create_comp_channel", ch, state,
                    IBV_COMP_CHANNEL.byteSize()));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Waits up to {@code timeoutMillis} for a completion event ({@code poll} on the channel's
     * file descriptor, then {@code ibv_get_cq_event}), and acknowledges it
     * ({@code ibv_ack_cq_events}). The queue that fired is disarmed: arm it again before the next
     * wait.
     *
     * @param timeoutMillis how long to wait; 0 checks without waiting
     * @return the completion queue that got a completion, or empty when the time ran out (or the
     *         wait was interrupted by a signal)
     * @throws IllegalArgumentException if {@code timeoutMillis} is negative
     * @throws IbverbsException if {@code poll} or {@code ibv_get_cq_event} fails
     * @throws IllegalStateException if this channel is closed
     */
    public Optional<CompletionQueue> awaitEvent(int timeoutMillis) {
        if (timeoutMillis < 0) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeoutMillis);
        }
        return await(timeoutMillis, null);
    }

    /**
     * Like {@link #awaitEvent(int)}, but may wait without end, and returns early (empty) when
     * {@code wakeup} is {@linkplain Wakeup#signal signalled}, before or during the wait; the
     * signal is then taken back. A thread parked here uses no CPU.
     *
     * @param timeoutMillis how long to wait; -1 for as long as it takes, 0 checks without waiting
     * @param wakeup        what another thread signals to end the wait
     * @return the completion queue that got a completion, or empty when woken, when the time ran
     *         out, or when a signal interrupted the wait
     * @throws IllegalArgumentException if {@code timeoutMillis} is below -1
     * @throws IbverbsException if {@code poll} or {@code ibv_get_cq_event} fails
     * @throws IllegalStateException if this channel or {@code wakeup} is closed
     */
    public Optional<CompletionQueue> awaitEvent(int timeoutMillis, Wakeup wakeup) {
        if (timeoutMillis < -1) {
            throw new IllegalArgumentException("timeout must be -1 (none) or more: " + timeoutMillis);
        }
        return await(timeoutMillis, java.util.Objects.requireNonNull(wakeup, "wakeup"));
    }

    private Optional<CompletionQueue> await(int timeoutMillis, Wakeup wakeup) {
        Calls.checkOpen(closed.get(), "completion channel");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            long count = wakeup == null ? 1 : 2;
            MemorySegment pollfd = arena.allocate(8 * count, 4);    // struct pollfd { int fd; short events; short revents; }
            pollfd.set(JAVA_INT, 0, fd);
            pollfd.set(JAVA_SHORT, 4, POLLIN);
            if (wakeup != null) {
                wakeup.checkOpen();
                pollfd.set(JAVA_INT, 8, wakeup.fileDescriptor());
                pollfd.set(JAVA_SHORT, 12, POLLIN);
            }
            int ready = (int) IbvFunctions.POLL.invokeExact(state, pollfd, count, timeoutMillis);
            if (ready == 0 || (ready < 0 && Downcalls.errno(state) == 4)) {     // timeout, EINTR
                return Optional.empty();
            }
            if (ready < 0) {
                throw IbverbsException.failed("poll", Downcalls.errno(state), "waiting on the completion channel");
            }
            if (wakeup != null && pollfd.get(JAVA_SHORT, 14) != 0) {
                wakeup.drain();
            }
            if (pollfd.get(JAVA_SHORT, 6) == 0) {
                return Optional.empty();        // only the wakeup
            }
            MemorySegment cq = arena.allocate(ADDRESS);
            MemorySegment cqContext = arena.allocate(ADDRESS);
            Calls.check("ibv_get_cq_event", (int) IbvFunctions.GET_CQ_EVENT.invokeExact(state, channel, cq, cqContext), state);
            MemorySegment fired = cq.get(ADDRESS, 0);
            IbvFunctions.ACK_CQ_EVENTS.invokeExact(fired, 1);
            return context.completionQueueAt(fired.address());
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The file descriptor events arrive on (for a caller's own {@code epoll}).
     *
     * @return the descriptor; owned by this channel
     */
    public int fileDescriptor() {
        return fd;
    }

    VerbsContext context() {
        return context;
    }

    MemorySegment pointer() {
        return channel;
    }

    void checkOpen() {
        Calls.checkOpen(closed.get(), "completion channel");
    }

    /**
     * Destroys the channel ({@code ibv_destroy_comp_channel}). Idempotent.
     *
     * @throws IbverbsException if the call fails, e.g. errno 16 (EBUSY) while a completion queue
     *                          still uses it (the channel then stays open)
     */
    @Override
    public void close() {
        if (Calls.destroyOnce(closed, "ibv_destroy_comp_channel", IbvFunctions.DESTROY_COMP_CHANNEL, channel)) {
            context.removed(this);
        }
    }
}
