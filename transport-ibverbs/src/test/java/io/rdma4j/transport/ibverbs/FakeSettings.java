package io.rdma4j.transport.ibverbs;

import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;

import java.util.HashMap;
import java.util.Map;

/** Settings as a manager would resolve them: given values, else the ibverbs defaults. */
final class FakeSettings implements Settings {

    private final Map<Setting<?>, Object> values = new HashMap<>();

    static FakeSettings defaults() {
        return new FakeSettings();
    }

    /** Parses {@code raw} as the manager would, and keeps the result. */
    <T> FakeSettings with(Setting<T> setting, String raw) {
        values.put(setting, setting.parse(raw, "test"));
        return this;
    }

    @Override
    public <T> T get(Setting<T> setting) {
        if (values.containsKey(setting)) {
            @SuppressWarnings("unchecked")
            T value = (T) values.get(setting);
            return value;
        }
        if (!VerbsSettings.all().contains(setting)) {
            throw new IllegalArgumentException("undeclared setting " + setting);
        }
        return setting.defaultValue();
    }
}
