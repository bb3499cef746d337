package io.rdma4j.transport.ibverbs;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Sends POSIX signals to peer JVMs ({@code kill -STOP} freezes one: its sockets stay open but answer nothing). */
final class Signals {

    private Signals() {
    }

    /** Sends {@code SIG<signal>} to {@code process}, failing the test when {@code kill} does. */
    static void send(String signal, Process process) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal);
    }
}
