package io.rdma4j.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * POSIX signals to peer processes, for tests that freeze one ({@code SIGSTOP}: its sockets stay
 * open, it answers nothing) and let it go on ({@code SIGCONT}).
 *
 * <p>{@code kill -STOP} returns once the signal is queued, while the process's threads stop one
 * after another: a frozen peer may still answer one request in between. {@link #stop(long)}
 * therefore returns only once the kernel shows every thread of the process stopped.
 */
public final class Signals {

    private static final Duration STOP_WITHIN = Duration.ofSeconds(30);

    private Signals() {
    }

    /**
     * Sends {@code SIG<signal>} to {@code pid} with {@code kill}.
     *
     * @throws org.opentest4j.AssertionFailedError if {@code kill} fails
     */
    public static void send(String signal, long pid) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal + " " + pid);
    }

    /**
     * Freezes {@code pid}: {@code SIGSTOP}, then waits until each of its threads is in state
     * {@code T} (stopped) in {@code /proc/<pid>/task/<tid>/stat}.
     *
     * @throws org.opentest4j.AssertionFailedError if {@code kill} fails or the threads are not all
     *                                             stopped within 30 s
     */
    public static void stop(long pid) throws IOException, InterruptedException {
        send("STOP", pid);
        long deadline = System.nanoTime() + STOP_WITHIN.toNanos();
        while (!allThreadsStopped(pid)) {
            if (System.nanoTime() - deadline > 0) {
                fail("process " + pid + " still has running threads " + STOP_WITHIN + " after SIGSTOP");
            }
            Thread.sleep(1);    // a bounded poll of the kernel's state, not a guess at timing
        }
    }

    /** {@code SIGCONT}: lets a {@link #stop stopped} process go on. */
    public static void resume(long pid) throws IOException, InterruptedException {
        send("CONT", pid);
    }

    private static boolean allThreadsStopped(long pid) throws IOException {
        List<Path> tasks;
        try (Stream<Path> s = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
            tasks = s.toList();
        }
        for (Path task : tasks) {
            if (state(task) != 'T') {
                return false;
            }
        }
        return !tasks.isEmpty();
    }

    /** The state letter of {@code /proc/<pid>/task/<tid>/stat}: after the command name's closing parenthesis. */
    private static char state(Path task) throws IOException {
        String stat;
        try {
            stat = Files.readString(task.resolve("stat"));
        } catch (NoSuchFileException gone) {     // the thread exited meanwhile: it runs no more
            return 'T';
        }
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }
}
