package io.rdma4j.spi;

/**
 * The validated configuration a manager resolved at start. Every setting a provider declared in
 * {@link TransportProvider#settings()} is present, already parsed.
 */
public interface Settings {

    /**
     * The value of {@code setting}.
     *
     * @param <T>     the setting's type
     * @param setting a setting that a provider or the manager declared
     * @return the parsed, validated value, never {@code null}
     * @throws IllegalArgumentException if the setting was not declared by any provider or the manager
     */
    <T> T get(Setting<T> setting);
}
