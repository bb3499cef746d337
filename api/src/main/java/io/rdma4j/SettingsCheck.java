package io.rdma4j;

import io.rdma4j.spi.Setting;

import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Catches mistyped settings when a manager starts: {@code rdma.*} system properties and
 * {@code RDMA_*} environment variables that no setting declares are reported with the closest
 * known name (a warning, or an error under {@link RdmaSettings#STRICT_SETTINGS}); settings of the
 * project's own transports whose module is absent are accepted with a warning.
 */
final class SettingsCheck {

    private static final System.Logger LOG = System.getLogger(RdmaManager.class.getName());

    /**
     * The settings of the project's own transports, by transport: key and environment variable.
     * Kept in step with the transports' declarations by a test that runs with all of them.
     */
    static final Map<String, Map<String, String>> PROJECT_TRANSPORT_SETTINGS = Map.of(
            "tcp", Map.of(
                    "rdma.allowTcpFallback", "RDMA_ALLOW_TCP_FALLBACK",
                    "rdma.tcp.maxChunkMiB", "RDMA_MAX_CHUNK_SIZE_MB",
                    "rdma.tcp.parallelism", "RDMA_TCP_FALLBACK_PARALLELISM",
                    "rdma.tcp.dataPort", "RDMA_TCP_DATA_PORT",
                    "rdma.tcp.idleTimeout", "RDMA_TCP_IDLE_TIMEOUT"),
            "ibverbs", Map.ofEntries(
                    Map.entry("rdma.disableIbverbs", "RDMA_DISABLE_IBVERBS"),
                    Map.entry("rdma.ibverbs.target", "RDMA_IBVERBS_TARGET"),
                    Map.entry("rdma.ibverbs.peerAffinity", "RDMA_PEER_DEVICE_AFFINITY"),
                    Map.entry("rdma.qpInitTimeout", "RDMA_QP_INIT_TIMEOUT"),
                    Map.entry("rdma.ibverbs.busyPollWindow", "RDMA_CQ_BUSY_POLL_WINDOW"),
                    Map.entry("rdma.ibverbs.queueDepth", "RDMA_IBVERBS_QUEUE_DEPTH"),
                    Map.entry("rdma.ibverbs.qpsPerPeer", "RDMA_IBVERBS_QPS_PER_PEER"),
                    Map.entry("rdma.ibverbs.maxSge", "RDMA_IBVERBS_MAX_SGE"),
                    Map.entry("rdma.ibverbs.minStripeKiB", "RDMA_IBVERBS_MIN_STRIPE_KB"),
                    Map.entry("rdma.ibverbs.peerCheckInterval", "RDMA_IBVERBS_PEER_CHECK_INTERVAL"),
                    Map.entry("rdma.ibverbs.peerSilenceLimit", "RDMA_IBVERBS_PEER_SILENCE_LIMIT"),
                    Map.entry("rdma.ibverbs.signalEvery", "RDMA_IBVERBS_SIGNAL_EVERY"),
                    Map.entry("rdma.ibverbs.maxInlineData", "RDMA_IBVERBS_MAX_INLINE_DATA")),
            "shm", Map.of(
                    "rdma.shm.disable", "RDMA_SHM_DISABLE",
                    "rdma.shm.allowAnyPtracer", "RDMA_SHM_ALLOW_ANY_PTRACER",
                    "rdma.shm.chunkMiB", "RDMA_SHM_CHUNK_MB",
                    "rdma.shm.copyThreads", "RDMA_SHM_COPY_THREADS",
                    "rdma.shm.releaseWait", "RDMA_SHM_RELEASE_WAIT",
                    "rdma.shm.forceStaging", "RDMA_SHM_FORCE_STAGING"));

    /** Variables named {@code RDMA_*} that are not settings: the project's scripts read them. */
    private static final Set<String> NOT_SETTINGS = Set.of("RDMA_PERF_JAVA_OPTS");

    /** Every declared name (keys and variables) mapped to what it names, for suggestions. */
    private final Map<String, String> declared = new LinkedHashMap<>();
    /** Names (keys and variables) of settings of absent project transports, to that transport. */
    private final Map<String, String> absent = new HashMap<>();

    SettingsCheck(List<Setting<?>> settings) {
        for (Setting<?> s : settings) {
            declared.put(s.key(), s.key());
            if (!s.envVar().isEmpty()) {
                declared.put(s.envVar(), s.envVar());
            }
        }
        PROJECT_TRANSPORT_SETTINGS.forEach((transport, names) -> names.forEach((key, env) -> {
            if (!declared.containsKey(key)) {
                absent.put(key, transport);
                absent.put(env, transport);
            }
        }));
    }

    /** The system properties as a map (a snapshot). */
    static Map<String, String> systemProperties() {
        Map<String, String> out = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            if (k instanceof String key && v instanceof String value) {
                out.put(key, value);
            }
        });
        return out;
    }

    /**
     * The builder's values without those of absent project transports, each of which is logged.
     * Unknown keys stay, for the resolution to refuse.
     */
    Map<String, String> explicit(Map<String, String> values) {
        Map<String, String> kept = new LinkedHashMap<>();
        values.forEach((key, value) -> {
            String transport = absent.get(key);
            if (transport == null) {
                kept.put(key, value);
            } else {
                warnAbsent("setting " + key, transport);
            }
        });
        return kept;
    }

    /**
     * Reports {@code rdma.*} properties and {@code RDMA_*} variables that no setting declares.
     *
     * @throws IllegalArgumentException listing them all when {@code strict}
     */
    void strays(Map<String, String> properties, Map<String, String> environment, boolean strict) {
        List<String> unknown = new ArrayList<>();
        new TreeMap<>(properties).keySet().stream().filter(k -> k.startsWith("rdma.")).forEach(k -> stray(
                "system property " + k, k, unknown));
        new TreeMap<>(environment).keySet().stream().filter(k -> k.startsWith("RDMA_") && !NOT_SETTINGS.contains(k))
                .forEach(k -> stray("environment variable " + k, k, unknown));
        if (unknown.isEmpty()) {
            return;
        }
        if (strict) {
            throw new IllegalArgumentException("unknown RDMA settings (rdma.strictSettings is on):\n  "
                    + String.join("\n  ", unknown));
        }
        for (String u : unknown) {
            LOG.log(Level.WARNING, u + "; it is ignored (set rdma.strictSettings=true to make this an error)");
        }
    }

    private void stray(String what, String name, List<String> unknown) {
        if (declared.containsKey(name)) {
            return;
        }
        String transport = absent.get(name);
        if (transport != null) {
            warnAbsent(what, transport);
        } else {
            unknown.add("unknown " + what + hint(name));
        }
    }

    private static void warnAbsent(String what, String transport) {
        LOG.log(Level.WARNING, what + " belongs to the " + transport + " transport, which is not on the class or "
                + "module path; it is ignored");
    }

    /** {@code " (did you mean X?)"} naming the closest declared or project setting name, or {@code ""}. */
    String hint(String name) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        List<String> candidates = new ArrayList<>(declared.keySet());
        candidates.addAll(absent.keySet());
        for (String c : candidates) {
            int d = distance(name.toLowerCase(java.util.Locale.ROOT), c.toLowerCase(java.util.Locale.ROOT));
            if (d < bestDistance) {
                best = c;
                bestDistance = d;
            }
        }
        return best == null || bestDistance > Math.max(3, name.length() / 3) ? "" : " (did you mean " + best + "?)";
    }

    /** Levenshtein distance: the fewest single-character insertions, deletions and substitutions. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }
}
