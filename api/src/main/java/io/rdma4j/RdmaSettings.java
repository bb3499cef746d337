package io.rdma4j;

import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.Setting;

import java.time.Duration;
import java.util.List;

/**
 * The manager's own settings. Each transport declares its own (see its provider); all are
 * resolved and validated when a manager starts, from, first match wins: the builder
 * ({@link RdmaManagerBuilder#set}), the system property, the environment variable, the default.
 */
public final class RdmaSettings {

    private RdmaSettings() {
    }

    /** Local address the control endpoint and the transports' listeners bind to. */
    public static final Setting<String> BIND_HOST = Setting.text("rdma.bindHost", "RDMA_BIND_HOST", "127.0.0.1",
            "Local address the control endpoint and transport listeners bind to (0.0.0.0 for every interface).",
            RdmaSettings::host);

    /**
     * Host name or address peers use to reach this manager; empty means the bind host, or this
     * machine's host name when the bind host is a wildcard.
     */
    public static final Setting<String> ADVERTISED_HOST = Setting.text("rdma.advertisedHost", "RDMA_ADVERTISED_HOST",
            "", "Host peers use to reach this process (put into tokens); empty: the bind host, or the machine's "
                    + "host name when binding a wildcard.", text -> text.isEmpty() ? text : host(text));

    /** Port of the control endpoint; 0 picks a free one. */
    public static final Setting<Integer> CONTROL_PORT = Setting.integer("rdma.controlPort", "RDMA_CONTROL_PORT", 0, 0,
            65535, "Port of the control endpoint (remote release, readiness, handshakes); 0 picks a free port.");

    /** Slots of the registration ring; a power of two. */
    public static final Setting<Integer> REGISTRATION_RING_SIZE = Setting.of("rdma.registrationRingSize",
            "RDMA_REGISTRATION_RING_SIZE", "1024",
            "Pending register/release requests the registration ring holds; more wait for room "
                    + "(rdma.registration.queueTimeout). A power of two.",
            text -> {
                int v;
                try {
                    v = Integer.parseInt(text);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("not an integer");
                }
                if (v < 2 || v > (1 << 20) || Integer.bitCount(v) != 1) {
                    throw new IllegalArgumentException("must be a power of two in [2, 1048576]");
                }
                return v;
            });

    /**
     * How long a {@code register}, {@code allocate} or {@code release} waits for room when the
     * registration ring is full before it fails with {@link RdmaTimeoutException}.
     */
    public static final Setting<Duration> REGISTRATION_QUEUE_TIMEOUT = Setting.duration("rdma.registration.queueTimeout",
            "RDMA_REGISTRATION_QUEUE_TIMEOUT", Duration.ofSeconds(30),
            "How long register/allocate/release wait for room when the registration ring is full, "
                    + "before failing with a timeout.");

    /** Prepared local memory kept per transport that prepares any (verbs: local memory regions). */
    public static final Setting<Integer> LOCAL_MEMORY_CACHE_ENTRIES = Setting.integer("rdma.localMemoryCacheEntries",
            "RDMA_LOCAL_MEMORY_CACHE_ENTRIES", 1024, 1, 1 << 20,
            "Local segments a transport keeps prepared (verbs: registered as local memory regions); the least recently "
                    + "used beyond this are released. Segments inside registered buffers never count.");

    /** Tokens whose route and decoded transport context are kept. */
    public static final Setting<Integer> TOKEN_CACHE_ENTRIES = Setting.integer("rdma.tokenCacheEntries",
            "RDMA_TOKEN_CACHE_ENTRIES", 4096, 1, 1 << 24,
            "Tokens whose chosen transport and decoded context are kept, so that ops on a known token skip that work.");

    /**
     * Whether an unknown {@code rdma.*} system property or {@code RDMA_*} environment variable
     * fails the start ({@link IllegalArgumentException}) instead of being logged as a warning.
     */
    public static final Setting<Boolean> STRICT_SETTINGS = Setting.bool("rdma.strictSettings", "RDMA_STRICT_SETTINGS",
            false, "Fail the start, instead of warning, on an rdma.* system property or RDMA_* environment variable "
                    + "that no setting declares (a typo).");

    /**
     * Every manager-level setting.
     *
     * @return an immutable list of the settings declared in this class
     */
    public static List<Setting<?>> all() {
        return List.of(BIND_HOST, ADVERTISED_HOST, CONTROL_PORT, REGISTRATION_RING_SIZE, REGISTRATION_QUEUE_TIMEOUT,
                LOCAL_MEMORY_CACHE_ENTRIES, TOKEN_CACHE_ENTRIES, STRICT_SETTINGS);
    }

    private static String host(String text) {
        if (text.isEmpty() || text.length() > 255 || text.chars().anyMatch(c -> c <= ' ' || c == '/')) {
            throw new IllegalArgumentException("not a host name or address");
        }
        new Endpoint(text, 1); // same rules as on the wire
        return text;
    }
}
