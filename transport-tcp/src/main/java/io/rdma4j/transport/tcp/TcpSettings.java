package io.rdma4j.transport.tcp;

import io.rdma4j.spi.Setting;

import java.time.Duration;
import java.util.List;

/**
 * The settings of the TCP transport. Every one is declared by {@link TcpTransportProvider#settings()},
 * so a manager parses and validates all of them when it starts, even when TCP ends up unused: a
 * bad value fails the start with a message naming the key, the environment variable and the
 * value. Values resolve, first match wins: the manager builder, the system property, the
 * environment variable, the default.
 */
public final class TcpSettings {

    private TcpSettings() {
    }

    /** Whether the TCP transport may run at all; {@code false} makes the provider unavailable. */
    public static final Setting<Boolean> ALLOW_TCP_FALLBACK = Setting.bool("rdma.allowTcpFallback",
            "RDMA_ALLOW_TCP_FALLBACK", true,
            "Whether the TCP transport may be used (it then runs next to faster transports as a fallback).");

    /**
     * Largest chunk one request moves, in MiB ({@code [1, 1024]}, default 64). A transfer of
     * {@code n} bytes takes {@code ceil(n / chunk)} request/reply exchanges.
     */
    public static final Setting<Integer> MAX_CHUNK_MIB = Setting.integer("rdma.tcp.maxChunkMiB",
            "RDMA_MAX_CHUNK_SIZE_MB", 64, 1, TcpProtocol.MAX_CHUNK_MIB,
            "Largest chunk, in MiB, that one TCP request moves.");

    /**
     * Connections one transfer uses at once ({@code [1, 64]}, default 1). With more than one, the
     * chunks of a transfer are shared out among that many connections working concurrently.
     */
    public static final Setting<Integer> PARALLELISM = Setting.integer("rdma.tcp.parallelism",
            "RDMA_TCP_FALLBACK_PARALLELISM", 1, 1, 64,
            "Connections one TCP transfer uses concurrently; its chunks are shared out among them.");

    /** Port of the TCP data endpoint; 0 (the default) picks a free one. */
    public static final Setting<Integer> DATA_PORT = Setting.integer("rdma.tcp.dataPort", "RDMA_TCP_DATA_PORT",
            0, 0, 65535, "Port the TCP transport serves remote reads and writes on; 0 picks a free port.");

    /**
     * How long a pooled connection to a peer may stay unused before it is closed (default 60s).
     * The data endpoint also gives a peer this long to finish sending a request it started.
     */
    public static final Setting<Duration> IDLE_TIMEOUT = Setting.duration("rdma.tcp.idleTimeout",
            "RDMA_TCP_IDLE_TIMEOUT", Duration.ofSeconds(60),
            "How long an idle pooled TCP connection is kept, and how long the data endpoint waits for "
                    + "the rest of a request it started receiving.");

    /** Every TCP setting. */
    public static List<Setting<?>> all() {
        return List.of(ALLOW_TCP_FALLBACK, MAX_CHUNK_MIB, PARALLELISM, DATA_PORT, IDLE_TIMEOUT);
    }
}
