package io.rdma4j.bench.cli;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaSettings;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * Everything rdma-perf asks of the transport layer: which providers there are, a manager that
 * runs only the one {@code --transport} names, which transport a transfer will use and why, and
 * the settings in effect. The one place that knows the SPI's type names.
 */
final class Transports {

    private static final String TCP = "tcp";

    /** A manager builder and what it was configured with. */
    record Configured(RdmaManagerBuilder builder, List<TransportProvider> providers, Map<String, String> values) {
    }

    /** The transport a transfer uses, and why. */
    record Choice(String transport, String reason) {
    }

    /** Setting, value, where the value came from. */
    record SettingInEffect(String key, String value, String source) {
    }

    private Transports() {
    }

    /** Every provider {@link ServiceLoader} finds, by descending priority. */
    static List<TransportProvider> discover() {
        List<TransportProvider> found = new ArrayList<>();
        ServiceLoader.load(TransportProvider.class, RdmaManager.class.getClassLoader()).forEach(found::add);
        found.sort((a, b) -> a.priority() != b.priority() ? Integer.compare(b.priority(), a.priority())
                : a.name().compareTo(b.name()));
        return found;
    }

    /**
     * A builder for this side's manager: every discovered provider, or only the one
     * {@code --transport} names; the TCP tuning options when TCP runs.
     *
     * @throws IllegalArgumentException when no provider has the requested name, or a TCP option
     *                                  is given while TCP does not run
     */
    static Configured configure(CommonOptions options) {
        List<TransportProvider> all = discover();
        List<TransportProvider> used = all;
        if (options.transport != null) {
            used = all.stream().filter(p -> p.name().equals(options.transport)).toList();
            if (used.isEmpty()) {
                throw new IllegalArgumentException("--transport " + options.transport + ": no such transport here (found: "
                        + String.join(", ", all.stream().map(TransportProvider::name).toList()) + ")");
            }
        }
        boolean tcp = used.stream().anyMatch(p -> p.name().equals(TCP));
        Map<String, String> values = new LinkedHashMap<>();
        if (options.parallelism > 0) {
            values.put("rdma.tcp.parallelism", Integer.toString(options.parallelism));
        }
        if (options.chunkMiB > 0) {
            values.put("rdma.tcp.maxChunkMiB", Integer.toString(options.chunkMiB));
        }
        if (!tcp && !values.isEmpty()) {
            throw new IllegalArgumentException("--parallelism and --chunk-mib tune the tcp transport, which --transport "
                    + options.transport + " leaves out");
        }
        RdmaManagerBuilder builder = RdmaManager.newBuilder();
        if (options.transport != null) {
            builder.providers(used);
        }
        values.forEach(builder::set);
        return new Configured(builder, used, Map.copyOf(values));
    }

    /**
     * Builds the manager; when {@code --transport} names a transport that cannot run here, says so.
     *
     * @throws IllegalStateException naming the transport and the reason, when it is requested and cannot run
     * @throws RuntimeException      what {@link RdmaManagerBuilder#build()} throws otherwise
     */
    static RdmaManager start(Configured configured, CommonOptions options) {
        try {
            return configured.builder().build();
        } catch (RuntimeException e) {
            if (options.transport == null) {
                throw e;
            }
            throw new IllegalStateException("--transport " + options.transport + " cannot run on this side: "
                    + RdmaPerf.describe(e), e);
        }
    }

    /**
     * Picks the transport a transfer between this side and the peer uses: the requested one when
     * both run it, else the first of this side's (fastest first) that the peer also runs, which
     * is what the manager routes to.
     *
     * @param local     this side's transports, fastest first
     * @param peer      the transports the peer's buffer offers
     * @param requested {@code --transport}, or {@code null}
     * @throws IllegalStateException naming what each side runs when they share none (or not the requested one)
     */
    static Choice choose(List<String> local, Collection<String> peer, String requested) {
        String sides = "this side runs " + local + ", the peer " + List.copyOf(peer);
        if (requested != null) {
            if (!local.contains(requested) || !peer.contains(requested)) {
                throw new IllegalStateException("--transport " + requested + " is not available on both sides: " + sides);
            }
            return new Choice(requested, "requested with --transport (" + sides + ")");
        }
        for (String name : local) {
            if (peer.contains(name)) {
                return new Choice(name, "the fastest transport both sides run (" + sides + ")");
            }
        }
        throw new IllegalStateException("the two sides share no transport: " + sides);
    }

    /**
     * Why each discovered provider that {@code manager} does not run is missing: its availability
     * reason, or that {@code --transport} left it out.
     */
    static Map<String, String> notRunning(RdmaManager manager, Configured configured) {
        Map<String, String> reasons = new LinkedHashMap<>();
        Settings settings = manager::setting;
        for (TransportProvider p : discover()) {
            if (manager.transports().contains(p.name())) {
                continue;
            }
            if (configured.providers().stream().noneMatch(u -> u.name().equals(p.name()))) {
                reasons.put(p.name(), "left out by --transport");
                continue;
            }
            Availability a;
            try {
                a = p.availability(settings);
            } catch (RuntimeException | LinkageError e) {
                a = Availability.unavailable(e.toString());
            }
            reasons.put(p.name(), a.isAvailable() ? "available but failed to open (see the log with --verbose)" : a.reason());
        }
        return reasons;
    }

    /** What a transport moves the bytes through, as far as this side can tell. */
    static String device(RdmaManager manager, String transport) {
        String bindHost = manager.setting(RdmaSettings.BIND_HOST);
        if (transport.equals(TCP)) {
            return "TCP sockets from " + bindHost;
        }
        if (transport.equals("shm")) {
            return "memory of this host (cross-memory attach and shared memory files)";
        }
        for (TransportProvider p : discover()) {
            if (p.name().equals(transport)) {
                for (Setting<?> s : p.settings()) {
                    if (s.key().endsWith(".target")) {
                        String target = display(manager.setting(s));
                        return target.equals("(empty)") ? "chosen automatically (" + s.key() + " is empty)" : target;
                    }
                }
            }
        }
        return "n/a";
    }

    /** Every setting of the manager and of the transports it was built with: value and where it came from. */
    static List<SettingInEffect> settingsInEffect(RdmaManager manager, Configured configured) {
        List<Setting<?>> all = new ArrayList<>(RdmaSettings.all());
        configured.providers().forEach(p -> all.addAll(p.settings()));
        List<SettingInEffect> out = new ArrayList<>();
        for (Setting<?> s : all) {
            String source;
            if (configured.values().containsKey(s.key())) {
                source = "rdma-perf option";
            } else if (System.getProperty(s.key()) != null) {
                source = "system property";
            } else if (System.getenv(s.envVar()) != null) {
                source = "environment " + s.envVar();
            } else {
                source = "default";
            }
            out.add(new SettingInEffect(s.key(), display(manager.setting(s)), source));
        }
        return out;
    }

    /** A setting's value as docs/settings.md writes them: {@code 30s}, {@code (empty)}. */
    static String display(Object value) {
        Object v = value instanceof java.util.Optional<?> o ? o.map(Object::toString).orElse("") : value;
        if (v instanceof java.time.Duration d) {
            return Durations.format(d);
        }
        String text = String.valueOf(v);
        return text.isEmpty() ? "(empty)" : text;
    }
}
