package io.rdma4j.spi;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

/**
 * One configuration knob: its system-property key, its environment variable, its default,
 * and how its text is parsed and validated. Providers list their settings
 * ({@link TransportProvider#settings()}) so that the manager can parse and validate every one of
 * them when it starts, even for a transport that ends up unused: a typo fails the start instead
 * of silently turning into a fallback.
 *
 * <p>Values are resolved, first match wins: the manager builder, the system property, the
 * environment variable, the default.
 *
 * @param <T> the parsed type
 */
public final class Setting<T> {

    private final String key;
    private final String envVar;
    private final String defaultText;
    private final String description;
    private final Function<String, T> parser;

    private Setting(String key, String envVar, String defaultText, String description,
                    Function<String, T> parser) {
        this.key = requireText(key, "key");
        this.envVar = envVar == null ? "" : envVar;
        this.defaultText = Objects.requireNonNull(defaultText, "defaultText");
        this.description = Objects.requireNonNull(description, "description");
        this.parser = Objects.requireNonNull(parser, "parser");
    }

    /**
     * A setting with a custom parser. The parser receives the raw text, trimmed, and throws
     * {@link IllegalArgumentException} with a message saying what is wrong; {@link #parse}
     * adds the key, environment variable and offending value to it.
     *
     * @param <T>         the parsed type
     * @param key         the system-property key; not blank
     * @param envVar      the environment variable, or {@code null} or empty for none
     * @param defaultText the default, as text the parser accepts
     * @param description one sentence saying what the setting does
     * @param parser      turns the trimmed text into the value
     * @return the new setting
     * @throws IllegalArgumentException if {@code key} is blank
     * @throws NullPointerException     if {@code defaultText}, {@code description} or {@code parser}
     *                                  is {@code null}
     */
    public static <T> Setting<T> of(String key, String envVar, String defaultText, String description,
                                    Function<String, T> parser) {
        return new Setting<>(key, envVar, defaultText, description, parser);
    }

    /**
     * A boolean: {@code true/false}, {@code yes/no}, {@code on/off}, {@code 1/0}, any case.
     *
     * @param key          the system-property key; not blank
     * @param envVar       the environment variable, or {@code null} or empty for none
     * @param defaultValue the value when nothing else sets one
     * @param description  one sentence saying what the setting does
     * @return the new setting
     * @throws IllegalArgumentException if {@code key} is blank
     */
    public static Setting<Boolean> bool(String key, String envVar, boolean defaultValue, String description) {
        return of(key, envVar, Boolean.toString(defaultValue), description, Setting::parseBoolean);
    }

    /**
     * An integer in {@code [min, max]}.
     *
     * @param key          the system-property key; not blank
     * @param envVar       the environment variable, or {@code null} or empty for none
     * @param defaultValue the value when nothing else sets one; should lie in {@code [min, max]},
     *                     since it is validated like any other value
     * @param min          the smallest accepted value
     * @param max          the largest accepted value
     * @param description  one sentence saying what the setting does
     * @return the new setting
     * @throws IllegalArgumentException if {@code key} is blank
     */
    public static Setting<Integer> integer(String key, String envVar, int defaultValue, int min, int max,
                                           String description) {
        return of(key, envVar, Integer.toString(defaultValue), description, text -> {
            int value;
            try {
                value = Integer.parseInt(text);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("not an integer");
            }
            if (value < min || value > max) {
                throw new IllegalArgumentException("must be in [" + min + ", " + max + "]");
            }
            return value;
        });
    }

    /**
     * Free text; the validator may throw {@link IllegalArgumentException}.
     *
     * @param key          the system-property key; not blank
     * @param envVar       the environment variable, or {@code null} or empty for none
     * @param defaultValue the value when nothing else sets one; it goes through {@code validator} too
     * @param description  one sentence saying what the setting does
     * @param validator    receives the trimmed text and returns the value to use
     * @return the new setting
     * @throws IllegalArgumentException if {@code key} is blank
     */
    public static Setting<String> text(String key, String envVar, String defaultValue, String description,
                                       Function<String, String> validator) {
        return of(key, envVar, defaultValue, description, validator);
    }

    /**
     * A positive duration, written {@code 500ms}, {@code 30s}, {@code 2m}, or ISO-8601
     * ({@code PT30S}); a bare number means seconds.
     *
     * @param key          the system-property key; not blank
     * @param envVar       the environment variable, or {@code null} or empty for none
     * @param defaultValue the value when nothing else sets one; positive, kept to the millisecond
     * @param description  one sentence saying what the setting does
     * @return the new setting
     * @throws IllegalArgumentException if {@code key} is blank
     */
    public static Setting<Duration> duration(String key, String envVar, Duration defaultValue, String description) {
        return of(key, envVar, formatDuration(defaultValue), description, Setting::parseDuration);
    }

    /**
     * The system-property key, e.g. {@code rdma.tcp.maxChunkMiB}.
     *
     * @return the key, never blank
     */
    public String key() {
        return key;
    }

    /**
     * The environment variable, e.g. {@code RDMA_MAX_CHUNK_SIZE_MB}; empty when there is none.
     *
     * @return the variable's name, or {@code ""}
     */
    public String envVar() {
        return envVar;
    }

    /**
     * The default, as text.
     *
     * @return the unparsed default
     */
    public String defaultText() {
        return defaultText;
    }

    /**
     * One sentence saying what the setting does.
     *
     * @return the description given at creation
     */
    public String description() {
        return description;
    }

    /**
     * Parses and validates {@code raw}.
     *
     * @param raw    the text, untrimmed
     * @param source where it came from, for the message ("system property", "builder", ...)
     * @return the parsed value
     * @throws IllegalArgumentException naming the key, the environment variable, the source and the value
     */
    public T parse(String raw, String source) {
        Objects.requireNonNull(raw, "raw");
        try {
            return parser.apply(raw.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid value '" + raw + "' for setting " + key
                    + (envVar.isEmpty() ? "" : " / " + envVar) + " (from " + source + "): " + e.getMessage(), e);
        }
    }

    /**
     * The default, parsed.
     *
     * @return the value {@link #defaultText()} parses to; parsed anew on every call
     * @throws IllegalArgumentException if the default itself is invalid
     */
    public T defaultValue() {
        return parse(defaultText, "default");
    }

    @Override
    public String toString() {
        return key;
    }

    private static Boolean parseBoolean(String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "true", "yes", "on", "1" -> Boolean.TRUE;
            case "false", "no", "off", "0" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("not a boolean (true/false)");
        };
    }

    private static Duration parseDuration(String text) {
        String t = text.toLowerCase(Locale.ROOT);
        Duration d;
        try {
            if (t.startsWith("pt") || t.startsWith("p")) {
                d = Duration.parse(text);
            } else if (t.endsWith("ms")) {
                d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2).trim()));
            } else if (t.endsWith("s")) {
                d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1).trim()));
            } else if (t.endsWith("m")) {
                d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1).trim()));
            } else {
                d = Duration.ofSeconds(Long.parseLong(t));
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw new IllegalArgumentException("not a duration (e.g. 500ms, 30s, 2m)");
        }
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException("must be positive");
        }
        return d;
    }

    private static String formatDuration(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }

    private static String requireText(String s, String what) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        return s;
    }
}
