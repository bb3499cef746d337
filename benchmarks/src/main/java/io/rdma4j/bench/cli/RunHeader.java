package io.rdma4j.bench.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * What a run's numbers depend on, printed before the table and put into the JSON: library
 * version, JVM, OS, CPUs, both sides, the transport and why, the device, every setting in effect
 * and the options of the run. Immutable.
 *
 * @param fields ordered; values are strings, numbers, lists or maps of the same
 */
record RunHeader(Map<String, Object> fields) {

    private static final String VERSION = readVersion();

    RunHeader {
        fields = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(fields));
    }

    /** The project version this tool was built from ({@code 0.1.0-SNAPSHOT}), or {@code unknown}. */
    static String libraryVersion() {
        return VERSION;
    }

    private static String readVersion() {
        try (InputStream in = RunHeader.class.getResourceAsStream("rdma-perf.properties")) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("version", "unknown");
            return v.startsWith("${") ? "unknown" : v;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** This process: library version, JVM, OS, CPU count, host name. What a server also tells its clients. */
    static Map<String, String> environment() {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("rdma4j", libraryVersion());
        env.put("jvm", System.getProperty("java.vm.name") + " " + Runtime.version() + " ("
                + System.getProperty("java.vm.vendor") + ")");
        env.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                + System.getProperty("os.arch"));
        env.put("cpus", Integer.toString(Runtime.getRuntime().availableProcessors()));
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "unknown";
        }
        env.put("host", host);
        return env;
    }

    /**
     * The header of one run.
     *
     * @param mode       {@code loopback (...)} or {@code peer HOST:PORT}
     * @param peer       what the server said about itself
     * @param notRunning this side's transports that do not run, with the reason
     */
    static RunHeader of(RunOptions options, String mode, Map<String, String> peer, Transports.Choice choice,
                        String device, Map<String, String> notRunning, List<Transports.SettingInEffect> settings) {
        Map<String, Object> f = new LinkedHashMap<>(environment());
        f.put("mode", mode);
        f.put("peer", peer);
        f.put("transport", choice.transport());
        f.put("transport_reason", choice.reason());
        f.put("device", device);
        f.put("not_running", notRunning);
        f.put("settings", settings.stream().map(s -> (Object) ordered("key", s.key(), "value", s.value(),
                "source", s.source())).toList());
        Map<String, Object> run = new LinkedHashMap<>();
        run.put("ops", options.ops());
        run.put("sizes", options.sizes());
        run.put("inflight", options.inflight);
        run.put("batch", options.batch);
        if (options.iters > 0) {
            run.put("iters", options.iters);
        } else {
            run.put("duration_s", options.duration.toNanos() / 1e9);
        }
        run.put("warmup", options.warmup != null ? options.warmup.toString()
                : options.iters > 0 ? "adaptive" : Durations.format(options.planWarmup()));
        run.put("wait", options.wait.name().toLowerCase(Locale.ROOT));
        run.put("timeout_s", options.timeoutSeconds);
        f.put("run", run);
        return new RunHeader(f);
    }

    /** A map keeping the order of {@code keysAndValues} (key, value, key, value, ...). */
    static Map<String, Object> ordered(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** The header as comment lines for the table: {@code # key: value}. */
    List<String> lines() {
        List<String> lines = new java.util.ArrayList<>();
        lines.add("# rdma-perf: rdma4j " + fields.get("rdma4j") + ", " + fields.get("jvm"));
        lines.add("# this side: " + fields.get("os") + ", " + fields.get("cpus") + " CPUs, host " + fields.get("host"));
        if (fields.get("peer") instanceof Map<?, ?> peer && !peer.isEmpty()) {
            lines.add("# peer: rdma4j " + peer.get("rdma4j") + ", " + peer.get("jvm") + ", " + peer.get("os") + ", "
                    + peer.get("cpus") + " CPUs, host " + peer.get("host"));
        }
        lines.add("# mode: " + fields.get("mode"));
        lines.add("# transport: " + fields.get("transport") + ", " + fields.get("transport_reason"));
        lines.add("# device: " + fields.get("device"));
        if (fields.get("not_running") instanceof Map<?, ?> notRunning) {
            notRunning.forEach((k, v) -> lines.add("# not running here: " + k + ": " + v));
        }
        if (fields.get("settings") instanceof List<?> settings) {
            StringBuilder sb = new StringBuilder("# settings:");
            for (Object o : settings) {
                if (o instanceof Map<?, ?> s) {
                    String item = " " + s.get("key") + "=" + s.get("value")
                            + (s.get("source").equals("default") ? "" : " (" + s.get("source") + ")");
                    if (sb.length() + item.length() > 100) {
                        lines.add(sb.toString());
                        sb = new StringBuilder("#          ");
                    }
                    sb.append(item);
                }
            }
            lines.add(sb.toString());
        }
        if (fields.get("run") instanceof Map<?, ?> run) {
            StringBuilder sb = new StringBuilder("# run:");
            run.forEach((k, v) -> sb.append(' ').append(k).append('=').append(v instanceof List<?> l
                    ? String.join(",", l.stream().map(String::valueOf).toList()) : v));
            lines.add(sb.toString());
        }
        return lines;
    }
}
