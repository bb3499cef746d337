package io.rdma4j;

import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.TransportProvider;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.ServiceLoader;
import java.util.function.Supplier;

/**
 * Configures and starts a manager. Not thread-safe; build once.
 */
public final class RdmaManagerBuilder {
    final Map<String, String> values = new LinkedHashMap<>();
    List<TransportProvider> providers;
    NanoClock clock = NanoClock.SYSTEM;
    /** The system properties, read at {@link #build()}; injectable for tests. */
    Supplier<Map<String, String>> properties = SettingsCheck::systemProperties;
    /** The environment, read at {@link #build()}; injectable for tests. */
    Supplier<Map<String, String>> environment = System::getenv;
    boolean keepEndpointOnFailure;
    /** Transports this manager may open: {@code null} for any. */
    Set<String> required;
    final Set<String> excluded = new TreeSet<>();

    RdmaManagerBuilder() {
    }

    /**
     * When the start fails, leave the control endpoint up answering readiness probes with the
     * failure (what {@link RdmaManager#shared()} does, so that peers learn why). Package-private: tests.
     */
    RdmaManagerBuilder keepEndpointOnFailure() {
        this.keepEndpointOnFailure = true;
        return this;
    }

    /**
     * Sets a setting by key ({@code rdma.tcp.parallelism}); wins over system properties and the
     * environment. Unknown keys and invalid values fail {@link #build()}; the key of a setting of
     * one of the project's own transports (tcp, ibverbs, shm) whose module is absent is accepted
     * with a warning.
     *
     * @param key   the setting's key; not {@code null}
     * @param value the value as text; not {@code null}
     * @return this builder
     */
    public RdmaManagerBuilder set(String key, String value) {
        values.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * Sets a typed setting from its text form.
     *
     * @param setting the setting
     * @param value   the value; its {@link String#valueOf(Object)} text is what is parsed
     * @return this builder
     */
    public RdmaManagerBuilder set(Setting<?> setting, Object value) {
        return set(setting.key(), String.valueOf(value));
    }

    /**
     * Opens only these transports (by provider name, e.g. {@code "ibverbs"}), so that no transfer
     * silently takes a slower one: when none of them can be opened, {@link #build()} fails, and an
     * op on a token that offers none of them fails with {@link NoCompatibleTransportException}.
     * Calling it again replaces the set.
     *
     * @param names the transports allowed; at least one, no {@code null}
     * @return this builder
     * @throws IllegalArgumentException if {@code names} is empty
     */
    public RdmaManagerBuilder requireTransports(String... names) {
        if (names.length == 0) {
            throw new IllegalArgumentException("requireTransports needs at least one transport name");
        }
        this.required = new TreeSet<>(List.of(names));
        return this;
    }

    /**
     * Never opens these transports (by provider name, e.g. {@code "tcp"}); adds to earlier calls.
     * Their ops fail as {@link #requireTransports} describes.
     *
     * @param names the transports to leave out; no {@code null}
     * @return this builder
     */
    public RdmaManagerBuilder excludeTransports(String... names) {
        excluded.addAll(List.of(names));
        return this;
    }

    /**
     * Uses exactly these providers instead of {@link ServiceLoader} discovery (embedding, tests).
     *
     * @param providers the providers, copied; no {@code null} elements
     * @return this builder
     */
    public RdmaManagerBuilder providers(List<? extends TransportProvider> providers) {
        this.providers = List.copyOf(providers);
        return this;
    }

    /** Runs deadlines and the watchdog on {@code clock} (tests). */
    RdmaManagerBuilder clock(NanoClock clock) {
        this.clock = Objects.requireNonNull(clock, "clock");
        return this;
    }

    /**
     * Reads neither system properties nor environment variables: only {@link #set} values and
     * defaults count. For tests and embedders that must not be affected by the process's setup.
     *
     * @return this builder
     */
    public RdmaManagerBuilder isolated() {
        this.properties = Map::of;
        this.environment = Map::of;
        return this;
    }

    /**
     * Starts the manager: resolves and validates every setting, opens the control endpoint,
     * opens every available transport. A system property named {@code rdma.*} or an environment
     * variable named {@code RDMA_*} that no setting declares is logged as a warning naming the
     * closest known setting, or fails the start when {@link RdmaSettings#STRICT_SETTINGS} is on.
     *
     * @return the started manager; the caller owns it and must close it
     * @throws IllegalArgumentException    listing every invalid setting or unknown key (and, with
     *                                     {@code rdma.strictSettings}, every unknown {@code rdma.*}
     *                                     property or {@code RDMA_*} variable)
     * @throws TransportUnavailableException when no transport is available or none opened
     * @throws RdmaException               when the control endpoint cannot be opened
     */
    public RdmaManager build() {
        return ManagerStartup.start(this);
    }
}
