package io.rdma4j.internal;

import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Every declared setting, parsed and validated once. Sources, first match wins: explicit
 * (builder) values, system properties, environment variables, defaults.
 */
public final class ResolvedSettings implements Settings {

    private final Map<String, Object> values;
    private final Map<String, String> sources;

    private ResolvedSettings(Map<String, Object> values, Map<String, String> sources) {
        this.values = values;
        this.sources = sources;
    }

    /**
     * Resolves {@code declared}.
     *
     * @param explicit   builder values by key; a key nobody declared is an error
     * @param properties system properties lookup
     * @param env        environment lookup
     * @param hint       text appended to the error for an unknown explicit key (a suggestion), or {@code ""}
     * @throws IllegalArgumentException listing every invalid value and unknown explicit key
     */
    public static ResolvedSettings resolve(List<Setting<?>> declared, Map<String, String> explicit,
                                           Function<String, String> properties, Function<String, String> env,
                                           Function<String, String> hint) {
        Map<String, Setting<?>> byKey = new LinkedHashMap<>();
        for (Setting<?> s : declared) {
            Setting<?> previous = byKey.putIfAbsent(s.key(), s);
            if (previous != null && !previous.envVar().equals(s.envVar())) {
                throw new IllegalArgumentException("setting " + s.key() + " declared twice with different "
                        + "environment variables: " + previous.envVar() + " and " + s.envVar());
            }
        }
        List<String> errors = new ArrayList<>();
        for (String key : explicit.keySet()) {
            if (!byKey.containsKey(key)) {
                errors.add("unknown setting '" + key + "'" + hint.apply(key) + " (known: " + new TreeSet<>(byKey.keySet()) + ")");
            }
        }
        Map<String, Object> values = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        for (Setting<?> s : byKey.values()) {
            String raw = explicit.get(s.key());
            String source = "builder";
            if (raw == null) {
                raw = properties.apply(s.key());
                source = "system property " + s.key();
            }
            if (raw == null && !s.envVar().isEmpty()) {
                raw = env.apply(s.envVar());
                source = "environment variable " + s.envVar();
            }
            if (raw == null) {
                raw = s.defaultText();
                source = "default";
            }
            try {
                values.put(s.key(), s.parse(raw, source));
                sources.put(s.key(), source);
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
            }
        }
        if (!errors.isEmpty()) {
            throw new IllegalArgumentException(errors.size() == 1 ? errors.get(0)
                    : errors.size() + " invalid settings:\n  " + String.join("\n  ", errors));
        }
        return new ResolvedSettings(Collections.unmodifiableMap(values), Collections.unmodifiableMap(sources));
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> setting) {
        Object v = values.get(setting.key());
        if (v == null) {
            throw new IllegalArgumentException("setting " + setting.key() + " was not declared by the manager or any provider");
        }
        return (T) v;
    }

    /** Where each value came from, by key (for logs). */
    public Map<String, String> sources() {
        return sources;
    }
}
