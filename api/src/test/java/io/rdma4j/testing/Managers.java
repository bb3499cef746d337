package io.rdma4j.testing;

import io.rdma4j.RdmaManager;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.foreign.Arena;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Managers and memory for one test, closed after it: register as
 * {@code @RegisterExtension final Managers managers = new Managers();}.
 */
public final class Managers implements AfterEachCallback {

    private final List<RdmaManager> started = new CopyOnWriteArrayList<>();
    private final Arena arena = Arena.ofShared();

    /** Starts an isolated manager (no system properties or environment) over exactly these providers. */
    public RdmaManager start(TransportProvider... providers) {
        return track(RdmaManager.newBuilder().isolated().providers(List.of(providers)).build());
    }

    /** Closes {@code manager} after the test. */
    public RdmaManager track(RdmaManager manager) {
        started.add(manager);
        return manager;
    }

    /** A shared arena closed after the test (after the managers). */
    public Arena arena() {
        return arena;
    }

    /**
     * Closes every manager, then checks that {@code close()} stopped the platform threads each one
     * started (registration ring, deadline sweeper; named after its control port), and closes the arena.
     */
    @Override
    public void afterEach(ExtensionContext context) throws InterruptedException {
        Set<String> names = started.stream()
                .flatMap(m -> Stream.of("rdma4j-registration-", "rdma4j-deadlines-")
                        .map(prefix -> prefix + m.controlEndpoint().port()))
                .collect(Collectors.toSet());
        started.forEach(RdmaManager::close);
        arena.close();
        List<Thread> ours = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> names.contains(t.getName())).toList();
        for (Thread t : ours) {
            t.join(10_000);
        }
        List<String> alive = ours.stream().filter(Thread::isAlive).map(Thread::getName).toList();
        if (!alive.isEmpty()) {
            throw new AssertionError("threads still running after their manager closed: " + alive);
        }
    }
}
