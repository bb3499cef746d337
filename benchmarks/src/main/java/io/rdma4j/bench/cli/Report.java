package io.rdma4j.bench.cli;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;

/**
 * Renders results as a fixed-width table and as JSON. Pure functions, thread-safe; JSON is
 * written by hand so the tool needs nothing beyond the JDK.
 */
public final class Report {

    private static final MathContext SIGNIFICANT = new MathContext(6, RoundingMode.HALF_EVEN);
    private static final String ROW = "%-5s  %8s  %6s  %10s  %10s  %10s  %10s  %-9s";

    private Report() {
    }

    /** The table's header line. */
    public static String tableHeader() {
        return String.format(Locale.ROOT, ROW, "op", "size", "iters", "MB/s", "avg us", "p50 us", "p99 us", "transport");
    }

    /** One table line for {@code r}, without trailing blanks. */
    public static String tableRow(PerfResult r) {
        return String.format(Locale.ROOT, ROW, r.op(), Sizes.format(r.sizeBytes()), r.iters(),
                readable(r.bandwidthMBps()), readable(r.latAvgUs()), readable(r.latP50Us()), readable(r.latP99Us()),
                r.transport()).stripTrailing();
    }

    /**
     * A number for the table: one decimal from 100 up, two from 1, four below (so 8-byte
     * bandwidths in the hundredths of MB/s still show).
     */
    static String readable(double v) {
        int decimals = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 1 ? 2 : 4;
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /**
     * A JSON array with one object per result, in order, each holding {@code op},
     * {@code size_bytes}, {@code iters}, {@code transport}, {@code bandwidth_mb_s},
     * {@code lat_avg_us}, {@code lat_p50_us} and {@code lat_p99_us}; ends with a newline.
     */
    public static String toJson(List<PerfResult> results) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < results.size(); i++) {
            PerfResult r = results.get(i);
            sb.append(i == 0 ? "\n" : ",\n").append("  {");
            sb.append("\"op\": ").append(jsonString(r.op()));
            sb.append(", \"size_bytes\": ").append(r.sizeBytes());
            sb.append(", \"iters\": ").append(r.iters());
            sb.append(", \"transport\": ").append(jsonString(r.transport()));
            sb.append(", \"bandwidth_mb_s\": ").append(jsonNumber(r.bandwidthMBps()));
            sb.append(", \"lat_avg_us\": ").append(jsonNumber(r.latAvgUs()));
            sb.append(", \"lat_p50_us\": ").append(jsonNumber(r.latP50Us()));
            sb.append(", \"lat_p99_us\": ").append(jsonNumber(r.latP99Us()));
            sb.append('}');
        }
        return sb.append(results.isEmpty() ? "]\n" : "\n]\n").toString();
    }

    /** {@code s} as a JSON string literal, quotes, backslashes and control characters escaped. */
    public static String jsonString(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"').toString();
    }

    /**
     * A finite number to six significant digits in plain notation ({@code 2848.71},
     * {@code 0.0174123}, {@code 30}); {@code null} for NaN and infinities, which JSON lacks.
     */
    public static String jsonNumber(double v) {
        if (!Double.isFinite(v)) {
            return "null";
        }
        if (v == 0) {
            return "0";
        }
        return new BigDecimal(v).round(SIGNIFICANT).stripTrailingZeros().toPlainString();
    }
}
