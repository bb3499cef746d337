package io.rdma4j.bench.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Byte sizes as people type them ({@code 8}, {@code 4KiB}, {@code 64mib}) and as the table shows
 * them. Pure functions, thread-safe.
 *
 * <p>Units are binary and case-insensitive: {@code B}, {@code KiB}, {@code MiB}, {@code GiB}, or
 * none (bytes). Decimal units ({@code KB}, {@code MB}, {@code GB}) are refused rather than guessed:
 * half the world reads {@code 4KB} as 4096 bytes and half as 4000.
 */
public final class Sizes {

    /** Largest size rdma-perf moves in one op (both processes hold a buffer this big). */
    public static final long MAX_BYTES = 1L << 30;

    private static final long KIB = 1L << 10;
    private static final long MIB = 1L << 20;
    private static final long GIB = 1L << 30;

    private Sizes() {
    }

    /**
     * Parses one size.
     *
     * @param text a whole number with an optional unit, e.g. {@code 512}, {@code 32KiB}, {@code 1 gib}
     * @return the size in bytes, in {@code [1, MAX_BYTES]}
     * @throws IllegalArgumentException naming the text when it is not a size or out of range
     */
    public static long parse(String text) {
        String t = text.strip();
        int i = 0;
        while (i < t.length() && t.charAt(i) >= '0' && t.charAt(i) <= '9') {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("not a size: '" + text + "' (expected e.g. 8, 4KiB, 64MiB)");
        }
        String unit = t.substring(i).strip().toLowerCase(Locale.ROOT);
        long multiplier = switch (unit) {
            case "", "b" -> 1;
            case "kib" -> KIB;
            case "mib" -> MIB;
            case "gib" -> GIB;
            case "k", "kb", "m", "mb", "g", "gb" -> throw new IllegalArgumentException("ambiguous unit in '" + text
                    + "': use KiB, MiB or GiB (powers of 1024) or plain bytes");
            default -> throw new IllegalArgumentException("unknown unit in '" + text + "' (use B, KiB, MiB or GiB)");
        };
        long number;
        try {
            number = Long.parseLong(t.substring(0, i));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("size too large: '" + text + "'");
        }
        if (number == 0) {
            throw new IllegalArgumentException("size must be positive: '" + text + "'");
        }
        if (number > MAX_BYTES / multiplier) {
            throw new IllegalArgumentException("size too large: '" + text + "' (at most " + format(MAX_BYTES) + ")");
        }
        return number * multiplier;
    }

    /**
     * Parses a comma-separated list of sizes, keeping order and duplicates out.
     *
     * @throws IllegalArgumentException naming the first bad element, or when the list is empty
     */
    public static List<Long> parseList(String text) {
        List<Long> sizes = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            if (part.isBlank()) {
                throw new IllegalArgumentException("empty element in size list '" + text + "'");
            }
            long size = parse(part);
            if (!sizes.contains(size)) {
                sizes.add(size);
            }
        }
        return List.copyOf(sizes);
    }

    /**
     * Formats a size with the largest binary unit that divides it: {@code 8 B}, {@code 4 KiB},
     * {@code 1536 KiB}, {@code 64 MiB}.
     */
    public static String format(long bytes) {
        if (bytes >= GIB && bytes % GIB == 0) {
            return bytes / GIB + " GiB";
        }
        if (bytes >= MIB && bytes % MIB == 0) {
            return bytes / MIB + " MiB";
        }
        if (bytes >= KIB && bytes % KIB == 0) {
            return bytes / KIB + " KiB";
        }
        return bytes + " B";
    }
}
