package io.rdma4j.bench.cli;

import java.time.Duration;

/** Durations as the tool prints them: {@code 500ms}, {@code 2s}, {@code 1.5s}. */
final class Durations {

    private Durations() {
    }

    static String format(Duration d) {
        long millis = d.toMillis();
        if (millis < 1000 || millis % 100 != 0) {
            return millis + "ms";
        }
        return millis % 1000 == 0 ? millis / 1000 + "s" : String.format(java.util.Locale.ROOT, "%.1fs", millis / 1000.0);
    }
}
