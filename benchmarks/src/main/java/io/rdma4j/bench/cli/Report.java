package io.rdma4j.bench.cli;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Renders results as a fixed-width table and as JSON. Pure functions, thread-safe; JSON is
 * written by hand (a few lines) rather than with a library.
 */
public final class Report {

    private static final MathContext SIGNIFICANT = new MathContext(6, RoundingMode.HALF_EVEN);
    private static final String ROW = "%-5s  %8s  %8s  %10s  %8s  %10s  %10s  %10s  %10s  %10s  %-9s";

    private Report() {
    }

    /** The table's header line. */
    public static String tableHeader() {
        return String.format(Locale.ROOT, ROW, "op", "size", "iters", "MB/s", "Mmsg/s", "avg us", "p50 us", "p99 us",
                "p99.9 us", "stddev us", "transport");
    }

    /** One table line for {@code r}, without trailing blanks. */
    public static String tableRow(PerfResult r) {
        return String.format(Locale.ROOT, ROW, r.op(), Sizes.format(r.sizeBytes()), r.iters(),
                readable(r.bandwidthMBps()), readable(r.msgRate() / 1e6), readable(r.latAvgUs()), readable(r.latP50Us()),
                readable(r.latP99Us()), readable(r.latP999Us()), readable(r.latStddevUs()), r.transport()).stripTrailing();
    }

    /**
     * A number for the table: one decimal from 100 up, two from 1, four below (so 8-byte
     * bandwidths in the hundredths of MB/s still show).
     */
    static String readable(double v) {
        int decimals = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 1 ? 2 : 4;
        return String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    /** One result as the JSON object of a row: today's fields first, then the newer ones. */
    static Map<String, Object> row(PerfResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("op", r.op());
        m.put("size_bytes", r.sizeBytes());
        m.put("iters", r.iters());
        m.put("transport", r.transport());
        m.put("bandwidth_mb_s", r.bandwidthMBps());
        m.put("lat_avg_us", r.latAvgUs());
        m.put("lat_p50_us", r.latP50Us());
        m.put("lat_p99_us", r.latP99Us());
        m.put("msg_rate_per_s", r.msgRate());
        m.put("lat_p999_us", r.latP999Us());
        m.put("lat_stddev_us", r.latStddevUs());
        m.put("lat_max_us", r.latMaxUs());
        m.put("batch", r.batch());
        m.put("inflight", r.inflight());
        m.put("elapsed_s", r.elapsedSeconds());
        return m;
    }

    /**
     * The whole run as a JSON object: {@code header} (the {@link RunHeader}'s fields) and
     * {@code results}, an array with one object per row ({@link #row}), one per line; ends with a newline.
     */
    public static String toJson(RunHeader header, List<PerfResult> results) {
        StringBuilder sb = new StringBuilder("{\n  \"header\": ");
        json(sb, header.fields(), "  ");
        sb.append(",\n  \"results\": [");
        for (int i = 0; i < results.size(); i++) {
            sb.append(i == 0 ? "\n    " : ",\n    ");
            json(sb, row(results.get(i)), null);
        }
        return sb.append(results.isEmpty() ? "]\n}\n" : "\n  ]\n}\n").toString();
    }

    /**
     * Appends {@code value} (a map, list, string, number, boolean or {@code null}) as JSON. With
     * an {@code indent}, maps take one line per entry; without, everything stays on one line.
     */
    static void json(StringBuilder sb, Object value, String indent) {
        switch (value) {
            case null -> sb.append("null");
            case Map<?, ?> map -> {
                if (map.isEmpty()) {
                    sb.append("{}");
                    return;
                }
                String inner = indent == null ? null : indent + "  ";
                sb.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : map.entrySet()) {
                    sb.append(first ? "" : ",").append(inner == null ? (first ? "" : " ") : "\n" + inner);
                    sb.append(jsonString(String.valueOf(e.getKey()))).append(": ");
                    json(sb, e.getValue(), e.getValue() instanceof List<?> ? null : inner);
                    first = false;
                }
                sb.append(inner == null ? "}" : "\n" + indent + "}");
            }
            case List<?> list -> {
                sb.append('[');
                for (int i = 0; i < list.size(); i++) {
                    sb.append(i == 0 ? "" : ", ");
                    json(sb, list.get(i), null);
                }
                sb.append(']');
            }
            case Double d -> sb.append(jsonNumber(d));
            case Float f -> sb.append(jsonNumber(f));
            case Number n -> sb.append(n);
            case Boolean b -> sb.append(b);
            default -> sb.append(jsonString(String.valueOf(value)));
        }
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
