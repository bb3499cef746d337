package io.rdma4j.transport.shm;

import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pid reuse, forced (soft-RoCE VM only: it writes {@code /proc/sys/kernel/ns_last_pid}): the owner
 * of a registered buffer, reached by cross-memory attach, is killed; a new process takes its pid
 * and maps memory at the very address of the owner's buffer. The holder's next write and read fail
 * as the owner's death, and the new process's memory is untouched. Runs as root, for whom the
 * kernel allows the copy by pid: only the holder's pidfd check stands between the write and the
 * new process.
 */
@Tag("softroce")
class ShmPidReuseVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Path LAST_PID = Path.of("/proc/sys/kernel/ns_last_pid");
    private static final int SIZE = 4096;

    /** Maps SIZE bytes of 0x5a at the given address (no replacing), prints READY and its pid; "check" -> CHANGED n. */
    private static final String IMPOSTOR = String.join("\n",
            "import ctypes, os, sys",
            "libc = ctypes.CDLL(None, use_errno=True)",
            "libc.mmap.restype = ctypes.c_void_p",
            "libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]",
            "addr, size = int(sys.argv[1], 16), int(sys.argv[2])",
            "p = libc.mmap(addr, size, 3, 0x22 | 0x100000, -1, 0)",       // PROT_RW, PRIVATE|ANONYMOUS|FIXED_NOREPLACE
            "if p != addr:",
            "    print('NOMAP', ctypes.get_errno(), flush=True); sys.exit(1)",
            "ctypes.memset(p, 0x5a, size)",
            "print('READY', os.getpid(), flush=True)",
            "for line in sys.stdin:",
            "    b = ctypes.string_at(p, size)",
            "    print('CHANGED', sum(1 for x in b if x != 0x5a), flush=True)");

    @Test
    void ownerKilled_itsPidTakenByANewProcess_holdersOpsFail_andTheNewProcessIsUntouched() throws Exception {
        try (ShmPeerProcess owner = ShmPeerProcess.startAs(List.of(), System.getProperty("java.class.path"),
                Duration.ofSeconds(300), "size=" + SIZE, "memory=register");
             RdmaManager holder = RdmaManager.newBuilder().isolated().providers(ServiceLoader.load(TransportProvider.class)
                     .stream().map(ServiceLoader.Provider::get).filter(p -> p.name().equals("shm")).toList()).build();
             Arena arena = Arena.ofShared()) {
            RdmaRemoteBuffer token = owner.token();
            MemorySegment local = Patterns.fill(arena.allocate(SIZE), 3);
            holder.read(token, arena.allocate(SIZE), TIMEOUT).join();          // attached: pidfd, grant
            String address = owner.command("address").substring(8);
            long pid = owner.process().pid();
            owner.process().destroyForcibly();
            assertTrue(owner.process().waitFor(60, TimeUnit.SECONDS));          // killed and reaped: the pid is free

            Process impostor = startWithPid(pid, address);
            try {
                Writer in = impostor.outputWriter(StandardCharsets.UTF_8);
                BufferedReader out = impostor.inputReader(StandardCharsets.UTF_8);
                System.out.println("ShmPidReuseVmTest: owner pid " + pid + " now names a new process with 0x5a at 0x" + address);

                Throwable write = assertThrows(CompletionException.class, () -> holder.write(token, local, TIMEOUT).join());
                Throwable read = assertThrows(CompletionException.class,
                        () -> holder.read(token, arena.allocate(SIZE), TIMEOUT).join());

                assertTrue(causeOf(write, PeerUnreachableException.class), String.valueOf(write));
                assertTrue(causeOf(read, PeerUnreachableException.class), String.valueOf(read));
                in.write("check\n");
                in.flush();
                assertEquals("CHANGED 0", out.readLine(), "the new process's memory at the owner's address");
            } finally {
                impostor.destroyForcibly();
                impostor.waitFor(60, TimeUnit.SECONDS);
            }
        }
    }

    private static boolean causeOf(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Starts the impostor so that it gets {@code pid}: ns_last_pid set to the pid before it, then
     * a fork. Another process of the VM may take the pid first: then it tries again (at most 50 times).
     */
    private static Process startWithPid(long pid, String address) throws IOException, InterruptedException {
        for (int attempt = 0; attempt < 50; attempt++) {
            Files.writeString(LAST_PID, Long.toString(pid - 1));
            Process p = new ProcessBuilder("/usr/bin/python3", "-c", IMPOSTOR, address, Integer.toString(SIZE))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            if (p.pid() == pid) {
                String ready = p.inputReader(StandardCharsets.UTF_8).readLine();
                assertEquals("READY " + pid, ready, "the new process mapped the owner's address");
                return p;
            }
            p.destroyForcibly();
            p.waitFor(60, TimeUnit.SECONDS);
        }
        throw new AssertionError("no new process got pid " + pid + " in 50 attempts");
    }
}
