package io.rdma4j.bench.cli;

import java.time.Duration;

/** Durations as the tool prints them: {@code 50us}, {@code 500ms}, {@code 2s}, {@code 1.5s}. */
final class Durations {

    private Durations() {
    }

    static String format(Duration d) {
        if (d.toNanos() % 1_000_000 != 0 && d.compareTo(Duration.ofSeconds(1)) < 0) {   // e.g. the verbs busy-poll window
            long nanos = d.toNanos();
            return nanos % 1000 == 0 ? nanos / 1000 + "us" : nanos + "ns";
        }
        long millis = d.toMillis();
        if (millis < 1000 || millis % 100 != 0) {
            return millis + "ms";
        }
        return millis % 1000 == 0 ? millis / 1000 + "s" : String.format(java.util.Locale.ROOT, "%.1fs", millis / 1000.0);
    }
}
