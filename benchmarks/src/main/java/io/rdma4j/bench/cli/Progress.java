package io.rdma4j.bench.cli;

import java.io.PrintStream;

/**
 * The progress line on stderr. On a terminal one line is redrawn in place with {@code \r} (at
 * most ten times a second); otherwise (a pipe, a file, CI) one plain line per op and size.
 * Used by the measuring thread only.
 *
 * <p>Whether stderr is a terminal cannot be asked from Java, so the launcher passes
 * {@code -Drdmaperf.stderr.tty=true|false}; without it, an interactive console counts as one.
 */
final class Progress {

    private static final long REDRAW_NANOS = 100_000_000L;

    private final PrintStream err;
    private final boolean terminal;
    private final int totalCases;
    private int caseNo;
    private String label = "";
    private long lastDraw;
    private int drawnWidth;

    Progress(PrintStream err, boolean terminal, int totalCases) {
        this.err = err;
        this.terminal = terminal;
        this.totalCases = totalCases;
    }

    /** Whether this process's stderr is taken to be a terminal. */
    static boolean stderrIsTerminal() {
        String flag = System.getProperty("rdmaperf.stderr.tty");
        if (flag != null) {
            return Boolean.parseBoolean(flag);
        }
        var console = System.console();
        return console != null && console.isTerminal();
    }

    /** A new op and size starts; {@code plan} says how long or how many. */
    void start(String op, long size, String plan) {
        caseNo++;
        label = "[" + caseNo + "/" + totalCases + "] " + op + " " + Sizes.format(size);
        if (terminal) {
            draw(label + ": " + plan);
        } else {
            err.println("rdma-perf: " + label + ": " + plan);
            err.flush();
        }
        lastDraw = System.nanoTime();
    }

    /** {@code done} actions are measured so far (redraws at most ten times a second, on a terminal only). */
    void measured(long done) {
        if (!terminal) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastDraw >= REDRAW_NANOS) {
            lastDraw = now;
            draw(label + ": " + done + " measured");
        }
    }

    /** Erases the line (terminal only), so the table prints clean. */
    void clear() {
        if (terminal && drawnWidth > 0) {
            err.print("\r" + " ".repeat(drawnWidth) + "\r");
            err.flush();
            drawnWidth = 0;
        }
    }

    private void draw(String text) {
        String padded = drawnWidth > text.length() ? text + " ".repeat(drawnWidth - text.length()) : text;
        err.print("\r" + padded);
        err.flush();
        drawnWidth = text.length();
    }
}
