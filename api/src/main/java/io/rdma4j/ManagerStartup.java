package io.rdma4j;

import io.rdma4j.internal.ResolvedSettings;
import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.internal.control.ControlClient;
import io.rdma4j.internal.control.ControlServer;
import io.rdma4j.internal.registration.RegistrationRing;
import io.rdma4j.internal.registration.RegistrationTable;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.ControlChannel;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.NanoClock;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.spi.Watchdog;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Startup and discovery: which transport providers exist, the settings they and the manager
 * declare, opening every available transport in priority order, and starting a manager's parts in
 * order, undoing a half-finished start. Stateless.
 */
final class ManagerStartup {

    private static final System.Logger LOG = System.getLogger(RdmaManager.class.getName());
    private static final Pattern PROVIDER_NAME = Pattern.compile("[a-z0-9_-]{1,32}");

    private ManagerStartup() {
    }

    /** What each transport is opened with. */
    record Context(String name, Settings settings, RegistrationLookup registrations, ControlChannel control,
                   Endpoint controlEndpoint, String advertisedHost, String bindHost, NanoClock clock,
                   Watchdog watchdog) implements TransportContext {
    }

    /** The providers to use, fastest first: the given ones, or those {@link ServiceLoader} finds. */
    static List<TransportProvider> providers(List<TransportProvider> given) {
        return sorted(given != null ? given : discover());
    }

    /** Resolves and validates every setting the manager and the providers declare. */
    static ResolvedSettings settings(List<TransportProvider> providers, Map<String, String> values,
                                     Map<String, String> properties, Map<String, String> environment) {
        List<Setting<?>> declared = new ArrayList<>(RdmaSettings.all());
        for (TransportProvider p : providers) {
            declared.addAll(p.settings());
        }
        SettingsCheck check = new SettingsCheck(declared);
        ResolvedSettings resolved = ResolvedSettings.resolve(declared, check.explicit(values), properties::get,
                environment::get, check::hint);
        check.strays(properties, environment, resolved.get(RdmaSettings.STRICT_SETTINGS));
        return resolved;
    }

    private static List<TransportProvider> discover() {
        List<TransportProvider> found = new ArrayList<>();
        ServiceLoader<TransportProvider> loader = ServiceLoader.load(TransportProvider.class, RdmaManager.class.getClassLoader());
        for (var it = loader.stream().iterator(); it.hasNext(); ) {
            var p = it.next();
            try {
                found.add(p.get());
            } catch (RuntimeException | LinkageError e) {
                LOG.log(Level.WARNING, "cannot instantiate transport provider " + p.type().getName() + "; skipping it", e);
            }
        }
        return found;
    }

    private static List<TransportProvider> sorted(List<TransportProvider> providers) {
        Map<String, TransportProvider> byName = new HashMap<>();
        for (TransportProvider p : providers) {
            if (!PROVIDER_NAME.matcher(p.name()).matches()) {
                throw new IllegalArgumentException("transport provider " + p.getClass().getName()
                        + " has an invalid name '" + p.name() + "' (must match " + PROVIDER_NAME + ")");
            }
            TransportProvider previous = byName.putIfAbsent(p.name(), p);
            if (previous != null) {
                throw new IllegalArgumentException("two transport providers are named " + p.name() + ": "
                        + previous.getClass().getName() + " and " + p.getClass().getName());
            }
        }
        return providers.stream()
                .sorted(Comparator.comparingInt(TransportProvider::priority).reversed().thenComparing(TransportProvider::name))
                .toList();
    }

    /**
     * The providers the builder's {@code requireTransports} / {@code excludeTransports} allow; each
     * other one goes into {@code discovered} as not available, with the reason.
     */
    static List<TransportProvider> allowed(List<TransportProvider> providers, RdmaManagerBuilder b,
                                           List<TransportInfo> discovered) {
        List<TransportProvider> allowed = new ArrayList<>();
        for (TransportProvider p : providers) {
            if (b.excluded.contains(p.name())) {
                discovered.add(new TransportInfo(p.name(), p.priority(), false, false, "excluded by excludeTransports"));
            } else if (b.required != null && !b.required.contains(p.name())) {
                discovered.add(new TransportInfo(p.name(), p.priority(), false, false,
                        "not among requireTransports " + b.required));
            } else {
                allowed.add(p);
            }
        }
        if (allowed.isEmpty() && !providers.isEmpty()) {
            throw new TransportUnavailableException("no RDMA transport allowed: found " + providers.stream()
                    .map(TransportProvider::name).toList() + ", but " + (b.required != null ? "requireTransports allows only "
                    + b.required : "excludeTransports leaves out " + b.excluded));
        }
        return allowed;
    }

    /** The host put into tokens: the configured one, else the bind host, else this machine's name. */
    static String advertisedHost(String bindHost, String configured) {
        if (!configured.isEmpty()) {
            return configured;
        }
        if (bindHost.equals("0.0.0.0") || bindHost.equals("::") || bindHost.equals("[::]")) {
            try {
                return InetAddress.getLocalHost().getHostName();
            } catch (UnknownHostException e) {
                throw new RdmaException("rdma.bindHost is a wildcard and this machine's host name cannot be resolved; "
                        + "set rdma.advertisedHost", e);
            }
        }
        return bindHost;
    }

    /**
     * Starts the parts in order (settings, control endpoint, watchdog, transports, registration
     * ring) and undoes, in reverse, whatever had started when one fails.
     */
    static RdmaManager start(RdmaManagerBuilder b) {
        List<TransportProvider> providers = ManagerStartup.providers(b.providers);
        ResolvedSettings settings = ManagerStartup.settings(providers, b.values, b.properties.get(), b.environment.get());
        byte[] incarnation = new byte[RegistrationLookup.INCARNATION_BYTES];
        new SecureRandom().nextBytes(incarnation);
        RegistrationTable table = new RegistrationTable(incarnation);
        ManagerControl control = new ManagerControl(table);

        String bindHost = settings.get(RdmaSettings.BIND_HOST);
        String advertised = ManagerStartup.advertisedHost(bindHost, settings.get(RdmaSettings.ADVERTISED_HOST));
        ControlServer server;
        try {
            server = ControlServer.bind(bindHost, settings.get(RdmaSettings.CONTROL_PORT), control);
        } catch (IOException e) {
            throw new RdmaException("cannot open the control endpoint on " + bindHost + ":"
                    + settings.get(RdmaSettings.CONTROL_PORT) + " (rdma.bindHost / rdma.controlPort): " + e.getMessage(), e);
        }
        Endpoint endpoint = new Endpoint(advertised, server.localAddress().getPort());
        control.endpoint(endpoint);
        WatchdogThread watchdog;
        try {
            watchdog = new WatchdogThread("rdma4j-deadlines-" + endpoint.port(), b.clock);
        } catch (RuntimeException | Error e) {
            server.close();
            throw e;
        }
        server.serve(watchdog);
        ControlClient client = new ControlClient(endpoint, watchdog);
        List<OpenTransport> opened = new ArrayList<>();
        List<TransportInfo> discovered = new ArrayList<>();
        RegistrationRing ring = null;
        try {
            Watchdog w = watchdog;
            ManagerStartup.open(allowed(providers, b, discovered), settings,
                    name -> new Context(name, settings, table, control.channel(name, client), endpoint, advertised, bindHost,
                            b.clock, w),
                    control::forget, opened, discovered);
            discovered.sort(Comparator.comparingInt(TransportInfo::priority).reversed().thenComparing(TransportInfo::name));
            List<OpenTransport> transports = List.copyOf(opened);
            ManagerStats stats = new ManagerStats(transports.stream().map(OpenTransport::name).toList());
            ring = new RegistrationRing(settings.get(RdmaSettings.REGISTRATION_RING_SIZE),
                    settings.get(RdmaSettings.REGISTRATION_QUEUE_TIMEOUT), "rdma4j-registration-" + endpoint.port(),
                    new ObservedRegistrar(new Registrar(incarnation, endpoint, table, transports,
                            () -> RdmaManager.closedError(endpoint)), table, stats));
            Dispatcher dispatcher = new Dispatcher(transports, table, watchdog, b.clock,
                    settings.get(RdmaSettings.TOKEN_CACHE_ENTRIES), stats, List.copyOf(discovered));
            RdmaManager m = new RdmaManager(new RdmaManager.Parts(settings, incarnation, table, transports, control, server, client,
                    endpoint, watchdog, ring, dispatcher, stats, List.copyOf(discovered)));
            control.releaseWith(m::release);
            control.ready();
            LOG.log(Level.DEBUG, () -> "rdma4j manager " + m.incarnation() + " ready on " + endpoint
                    + " with transports " + m.transports());
            return m;
        } catch (RuntimeException | Error e) {
            control.failed(String.valueOf(e.getMessage()));
            if (ring != null) {
                ring.close(); // its worker closes the transports
            } else {
                for (int i = opened.size() - 1; i >= 0; i--) {
                    opened.get(i).transport().close();
                }
            }
            client.close();
            if (b.keepEndpointOnFailure) {
                SharedManager.linger(server, watchdog); // still answering probes, with its deadlines
            } else {
                server.close();
                watchdog.close();
            }
            throw e;
        }
    }

    /**
     * Opens every available provider, in order, into {@code opened} (which the caller closes on
     * failure). A provider that fails to open is skipped with a logged reason.
     *
     * @param contexts the context each provider is opened with, by provider name
     * @param onFailed called with the name of a provider that failed to open (to undo what its open
     *                 did to the manager, such as a control handler)
     * @param discovered receives what became of each provider, in order
     * @throws TransportUnavailableException listing every reason when none opened
     */
    static void open(List<TransportProvider> providers, ResolvedSettings settings,
                     Function<String, TransportContext> contexts, java.util.function.Consumer<String> onFailed,
                     List<OpenTransport> opened, List<TransportInfo> discovered) {
        Map<String, String> unavailable = new LinkedHashMap<>();
        Map<String, Throwable> failed = new LinkedHashMap<>();
        long localCacheEntries = settings.get(RdmaSettings.LOCAL_MEMORY_CACHE_ENTRIES);
        for (TransportProvider p : providers) {
            Availability a;
            try {
                a = p.availability(settings);
            } catch (RuntimeException | LinkageError e) {
                a = Availability.unavailable("availability check failed: " + e);
            }
            if (!a.isAvailable()) {
                String reason = a.reason();
                unavailable.put(p.name(), reason);
                discovered.add(new TransportInfo(p.name(), p.priority(), false, false, String.valueOf(reason)));
                LOG.log(Level.DEBUG, () -> "transport " + p.name() + " not available: " + reason);
                continue;
            }
            try {
                Transport t = Objects.requireNonNull(p.open(contexts.apply(p.name())), p.name() + " provider returned no transport");
                opened.add(OpenTransport.of(p.name(), t, localCacheEntries));
                discovered.add(new TransportInfo(p.name(), p.priority(), true, true, ""));
            } catch (Throwable e) {
                onFailed.accept(p.name());
                failed.put(p.name(), e);
                discovered.add(new TransportInfo(p.name(), p.priority(), true, false,
                        e.getMessage() == null ? e.toString() : e.getMessage()));
                LOG.log(Level.WARNING, "transport " + p.name() + " failed to open; skipping it", e);
            }
        }
        if (!opened.isEmpty()) {
            if (!failed.isEmpty()) {
                LOG.log(Level.WARNING, "some RDMA transports failed to initialize: " + describe(failed));
            }
            return;
        }
        throw unavailable(unavailable, failed);
    }

    private static TransportUnavailableException unavailable(Map<String, String> unavailable, Map<String, Throwable> failed) {
        if (failed.isEmpty()) {
            StringBuilder sb = new StringBuilder("no RDMA transport available");
            if (unavailable.isEmpty()) {
                sb.append(": no transport provider found (is rdma4j-transport-tcp, rdma4j-transport-shm or rdma4j-transport-ibverbs on the class/module path?)");
            } else {
                sb.append(": ");
                unavailable.forEach((n, r) -> sb.append(n).append(": ").append(r).append("; "));
                sb.setLength(sb.length() - 2);
            }
            return new TransportUnavailableException(sb.toString());
        }
        StringBuilder sb = new StringBuilder("all available RDMA transports failed to initialize: ").append(describe(failed));
        if (!unavailable.isEmpty()) {
            sb.append(" (not available:");
            unavailable.forEach((n, r) -> sb.append(' ').append(n).append(": ").append(r).append(';'));
            sb.setLength(sb.length() - 1);
            sb.append(')');
        }
        TransportUnavailableException e = new TransportUnavailableException(sb.toString());
        failed.values().forEach(e::addSuppressed);
        return e;
    }

    private static String describe(Map<String, Throwable> failed) {
        StringBuilder sb = new StringBuilder();
        failed.forEach((n, t) -> sb.append(sb.isEmpty() ? "" : "; ").append(n).append(": ").append(
                t.getMessage() == null ? t.toString() : t.getMessage()));
        return sb.toString();
    }
}
