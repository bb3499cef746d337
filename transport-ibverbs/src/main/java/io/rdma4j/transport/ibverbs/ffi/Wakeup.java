package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A way to wake a thread parked in {@link CompletionChannel#awaitEvent(int, Wakeup)} from another
 * thread (an {@code eventfd}): {@link #signal} makes the wait return at once, or the next one if
 * nobody waits yet. Thread-safe. Owns its file descriptor: close it once no thread waits on it.
 */
public final class Wakeup implements AutoCloseable {

    private static final int EFD_NONBLOCK = 0x800;
    private static final int EFD_CLOEXEC = 0x80000;

    private final int fd;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Wakeup(int fd) {
        this.fd = fd;
    }

    /**
     * Creates a wakeup.
     *
     * @return the wakeup; the caller owns it
     * @throws IbverbsException naming {@code eventfd} and the errno if it fails
     */
    public static Wakeup create() {
        IbvFunctions.requireLibrary("eventfd");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            int fd = (int) IbvFunctions.EVENTFD.invokeExact(state, 0, EFD_NONBLOCK | EFD_CLOEXEC);
            if (fd < 0) {
                throw IbverbsException.failed("eventfd", Downcalls.errno(state), "creating a wakeup for a completion poller");
            }
            return new Wakeup(fd);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Wakes the waiter. Never blocks.
     *
     * @throws IllegalStateException if this wakeup is closed
     */
    public void signal() {
        Calls.checkOpen(closed.get(), "wakeup");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment one = arena.allocate(JAVA_LONG);
            one.set(JAVA_LONG, 0, 1);
            long unusedWritten = (long) IbvFunctions.WRITE.invokeExact(state, fd, one, 8L);   // only fails when the count would overflow
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /** Takes back the signals given so far (the waiter saw them). */
    void drain() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            long unusedRead = (long) IbvFunctions.READ.invokeExact(state, fd, arena.allocate(JAVA_LONG), 8L);  // EAGAIN: none
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    void checkOpen() {
        Calls.checkOpen(closed.get(), "wakeup");
    }

    int fileDescriptor() {
        return fd;
    }

    /** Closes the file descriptor. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try (Arena arena = Arena.ofConfined()) {
                int unusedResult = (int) IbvFunctions.CLOSE.invokeExact(arena.allocate(Downcalls.CAPTURE_STATE), fd);
            } catch (Throwable t) {
                throw Downcalls.rethrow(t);
            }
        }
    }

    @Override
    public String toString() {
        return "wakeup (eventfd " + fd + ")";
    }
}
