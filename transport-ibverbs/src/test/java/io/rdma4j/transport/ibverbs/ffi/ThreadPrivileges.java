package io.rdma4j.transport.ibverbs.ffi;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Test support: runs code as an unprivileged registrant would, on a thread of its own: without
 * {@code CAP_IPC_LOCK} in its effective set (capabilities are per thread on Linux) and with a
 * lowered soft {@code RLIMIT_MEMLOCK}, restored afterwards. The kernel pins registered memory only
 * up to that limit unless the thread has {@code CAP_IPC_LOCK}.
 *
 * <p>Why a thread of its own: {@code capset} gives the thread new credentials, even when they are
 * set back, and the kernel refuses ({@code EACCES}) verbs commands written to a device file by a
 * thread whose credentials are not those of the thread that opened it (rxe's {@code ibv_post_send}
 * is such a command). Changing the test runner's own thread would break every later test that
 * opens a device there and posts from another thread.
 */
@SuppressWarnings("restricted")
final class ThreadPrivileges {

    private ThreadPrivileges() {
    }

    private static final int LINUX_CAPABILITY_VERSION_3 = 0x20080522;
    private static final int CAP_IPC_LOCK = 14;
    private static final int RLIMIT_MEMLOCK = 8;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CAPGET = libc("capget", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle CAPSET = libc("capset", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
    private static final MethodHandle GETRLIMIT = libc("getrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
    private static final MethodHandle SETRLIMIT = libc("setrlimit", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));

    /**
     * Runs {@code body} on a new thread without CAP_IPC_LOCK and with the soft locked-memory limit
     * at {@code limitBytes}, and waits for it; rethrows what {@code body} threw.
     */
    static void withoutIpcLock(long limitBytes, Runnable body) throws Throwable {
        Throwable[] thrown = new Throwable[1];
        Thread t = Thread.ofPlatform().name("without-ipc-lock").start(() -> {
            try {
                dropIpcLockAndRun(limitBytes, body);
            } catch (Throwable e) {
                thrown[0] = e;
            }
        });
        t.join();
        if (thrown[0] != null) {
            throw thrown[0];
        }
    }

    private static void dropIpcLockAndRun(long limitBytes, Runnable body) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header = arena.allocate(8, 4);         // { u32 version; int pid = 0 (this thread) }
            header.set(JAVA_INT, 0, LINUX_CAPABILITY_VERSION_3);
            MemorySegment saved = arena.allocate(24, 4);         // 2 x { u32 effective, permitted, inheritable }
            check("capget", (int) CAPGET.invokeExact(header, saved));
            MemorySegment lowered = arena.allocate(24, 4);
            lowered.copyFrom(saved);
            lowered.set(JAVA_INT, 0, saved.get(JAVA_INT, 0) & ~(1 << CAP_IPC_LOCK));
            MemorySegment savedLimit = arena.allocate(JAVA_LONG, 2);
            check("getrlimit", (int) GETRLIMIT.invokeExact(RLIMIT_MEMLOCK, savedLimit));
            MemorySegment loweredLimit = arena.allocate(JAVA_LONG, 2);
            loweredLimit.set(JAVA_LONG, 0, limitBytes);
            loweredLimit.set(JAVA_LONG, 8, savedLimit.get(JAVA_LONG, 8));
            check("setrlimit", (int) SETRLIMIT.invokeExact(RLIMIT_MEMLOCK, loweredLimit));
            try {
                check("capset", (int) CAPSET.invokeExact(header, lowered));
                try {
                    body.run();
                } finally {
                    check("capset", (int) CAPSET.invokeExact(header, saved));
                }
            } finally {
                check("setrlimit", (int) SETRLIMIT.invokeExact(RLIMIT_MEMLOCK, savedLimit));
            }
        }
    }

    private static void check(String function, int result) {
        if (result != 0) {
            throw new IllegalStateException(function + " failed");
        }
    }

    private static MethodHandle libc(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor);
    }
}
