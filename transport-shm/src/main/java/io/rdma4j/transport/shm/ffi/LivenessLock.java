package io.rdma4j.transport.shm.ffi;

import io.rdma4j.unix.Downcalls;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CountDownLatch;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A word in shared memory that tells other processes, with a plain load and no system call, that
 * this process has not exited: a robust, process-shared mutex ({@code pthread_mutexattr_setrobust(3)})
 * that one thread of this process locks and holds until {@link #close()}.
 * <pre>
 *   int pthread_mutexattr_init(pthread_mutexattr_t *attr);
 *   int pthread_mutexattr_setpshared(pthread_mutexattr_t *attr, int pshared);   // PTHREAD_PROCESS_SHARED = 1
 *   int pthread_mutexattr_setrobust(pthread_mutexattr_t *attr, int robust);     // PTHREAD_MUTEX_ROBUST = 1
 *   int pthread_mutexattr_destroy(pthread_mutexattr_t *attr);
 *   int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *attr);
 *   int pthread_mutex_lock(pthread_mutex_t *m);      // all: 0, or an error number (not errno)
 *   int pthread_mutex_unlock(pthread_mutex_t *m);
 *   int pthread_mutex_destroy(pthread_mutex_t *m);
 *   pid_t gettid(void);                              // glibc 2.30+
 * </pre>
 *
 * <p><b>Why it says the truth.</b> A robust mutex's first word holds its owner thread's id; the C
 * library lists it in the thread's robust list, registered with the kernel
 * ({@code set_robust_list(2)}). When the thread ends, however it ends (SIGKILL included), the
 * kernel sets {@code FUTEX_OWNER_DIED} in the word and clears the id, before the thread is gone;
 * a process is reaped, and its pid free for another, only after all its threads are gone. So
 * while the word holds an id without that bit, the process has not been reaped. Any other value
 * ({@code 0}: never locked, or unlocked at {@link #close()}; the bit set) says nothing: ask the
 * process's pidfd.
 *
 * <p><b>Whom to believe.</b> The holder of the lock writes the word's memory; a process can write
 * any value there and die without the kernel marking it (it never locked, or locked elsewhere). A
 * reader must believe the word only where a lie would harm nobody but the writer (e.g. before
 * copying into memory the writer handed over), never before acting on a pid.
 *
 * <p>The layout used, the lock word first in {@code pthread_mutex_t}, is glibc's (musl keeps the
 * mutex type first); {@link #hold} checks it after locking (the word must hold the thread's id)
 * and otherwise gives up, leaving the word 0: readers then ask the pidfd, as before.
 */
@SuppressWarnings("restricted")     // this package is where the restricted FFM calls are meant to live
public final class LivenessLock implements AutoCloseable {

    /** Bytes the mutex may take (a {@code pthread_mutex_t}: 40 on x86-64, 48 on aarch64), 8-aligned. */
    public static final long SIZE = 64;

    private static final int OWNER_DIED = 0x4000_0000;
    private static final int TID_MASK = 0x3fff_ffff;
    private static final VarHandle INT = JAVA_INT.varHandle();

    private final MemorySegment mutex;
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch started = new CountDownLatch(1);
    private final Thread thread;
    private volatile boolean held;
    private volatile String failure = "";
    private boolean closed;     // guarded by this

    private LivenessLock(MemorySegment mutex, String threadName) {
        this.mutex = mutex;
        this.thread = Thread.ofPlatform().daemon().name(threadName).unstarted(this::holdUntilClosed);
    }

    /**
     * Locks a new robust mutex at {@code mutex} on a new platform thread and returns once it is
     * held, or once that failed ({@link #held()} false, the word 0, {@link #failure()} says why).
     *
     * @param mutex      {@link #SIZE} bytes, 8-aligned, zero, in memory other processes map
     *                   ({@code MAP_SHARED}); it must stay mapped until {@link #close()} returned
     * @param threadName the holding thread's name
     * @return the lock; the caller closes it before unmapping {@code mutex}
     */
    public static LivenessLock hold(MemorySegment mutex, String threadName) {
        if (mutex.byteSize() < SIZE || mutex.address() % 8 != 0) {
            throw new IllegalArgumentException("a liveness lock needs " + SIZE + " bytes, 8-aligned: " + mutex);
        }
        LivenessLock lock = new LivenessLock(mutex.asSlice(0, SIZE), threadName);
        lock.thread.start();
        boolean interrupted = false;
        while (true) {
            try {
                lock.started.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return lock;
    }

    /**
     * Whether the word at {@code mutex} says its holder's process has not exited (see the class
     * comment for whom to believe). A volatile load; never throws on a mapped segment.
     *
     * @param mutex where a {@link LivenessLock} was (or may be) held, mapped here
     * @return true: the holding thread had not ended when the load ran; false: cannot tell
     */
    public static boolean saysAlive(MemorySegment mutex) {
        int w = (int) INT.getVolatile(mutex, 0L);
        return (w & TID_MASK) != 0 && (w & OWNER_DIED) == 0;
    }

    /** Whether the lock is held (until {@link #close()}). */
    public boolean held() {
        return held;
    }

    /** Why the lock could not be held, or {@code ""}. */
    public String failure() {
        return failure;
    }

    private void holdUntilClosed() {
        boolean locked = false;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(16, 8);          // pthread_mutexattr_t: 4 bytes on Linux
            check("pthread_mutexattr_init", (int) Handles.ATTR_INIT.invokeExact(attr));
            try {
                check("pthread_mutexattr_setpshared", (int) Handles.ATTR_SETPSHARED.invokeExact(attr, 1));
                check("pthread_mutexattr_setrobust", (int) Handles.ATTR_SETROBUST.invokeExact(attr, 1));
                check("pthread_mutex_init", (int) Handles.MUTEX_INIT.invokeExact(mutex, attr));
            } finally {
                int ignored = (int) Handles.ATTR_DESTROY.invokeExact(attr);
            }
            check("pthread_mutex_lock", (int) Handles.MUTEX_LOCK.invokeExact(mutex));
            locked = true;
            int tid = (int) Handles.GETTID.invokeExact();
            int word = (int) INT.getVolatile(mutex, 0L);
            if ((word & TID_MASK) != tid) {
                throw new IllegalStateException("the C library's mutex does not keep its owner's thread id first "
                        + "(word " + Integer.toHexString(word) + ", thread " + tid + ")");
            }
            held = true;
        } catch (Throwable t) {
            failure = t.getMessage() == null ? t.toString() : t.getMessage();
        }
        if (!held) {
            unlockAndClear(locked);
            started.countDown();
            return;
        }
        started.countDown();
        while (true) {
            try {
                release.await();
                break;
            } catch (InterruptedException e) {
                // only close() ends the hold
            }
        }
        held = false;
        unlockAndClear(true);
    }

    /** On the holding thread: unlocks when locked, then zeroes the word so that it says nothing. */
    private void unlockAndClear(boolean locked) {
        try {
            if (locked) {
                int ignored = (int) Handles.MUTEX_UNLOCK.invokeExact(mutex);
            }
            int ignored = (int) Handles.MUTEX_DESTROY.invokeExact(mutex);
        } catch (Throwable t) {
            // nothing to do: the word is cleared below
        }
        mutex.fill((byte) 0);
        VarHandle.fullFence();
    }

    private static void check(String call, int rc) {
        if (rc != 0) {
            throw new IllegalStateException(call + " failed: error " + rc);
        }
    }

    /**
     * Unlocks (the word then says nothing) and ends the holding thread; returns once it ended.
     * Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        release.countDown();
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static final class Handles {
        static final MethodHandle ATTR_INIT = Downcalls.libc("pthread_mutexattr_init", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle ATTR_SETPSHARED = Downcalls.libc("pthread_mutexattr_setpshared",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        static final MethodHandle ATTR_SETROBUST = Downcalls.libc("pthread_mutexattr_setrobust",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        static final MethodHandle ATTR_DESTROY = Downcalls.libc("pthread_mutexattr_destroy",
                FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle MUTEX_INIT = Downcalls.libc("pthread_mutex_init", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        static final MethodHandle MUTEX_LOCK = Downcalls.libc("pthread_mutex_lock", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle MUTEX_UNLOCK = Downcalls.libc("pthread_mutex_unlock", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle MUTEX_DESTROY = Downcalls.libc("pthread_mutex_destroy", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        static final MethodHandle GETTID = Downcalls.libc("gettid", FunctionDescriptor.of(JAVA_INT));
    }
}
