package io.rdma4j;

import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.internal.control.ControlServer;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The process-wide manager behind {@link RdmaManager#shared()}: created on first use with default
 * settings, closed at JVM shutdown, replaced after it was closed. When it cannot start, the same
 * failure is reported to every later caller, and its control endpoint stays up answering
 * readiness probes with it.
 */
final class SharedManager {

    private static final Object LOCK = new Object();
    private static RdmaManager shared;
    private static RuntimeException failure;
    /** Control endpoints of managers that failed to start and still answer probes with the failure. */
    private static final List<AutoCloseable> LINGERING = new CopyOnWriteArrayList<>();

    private SharedManager() {
    }

    static RdmaManager get() {
        synchronized (LOCK) {
            if (failure != null) {
                throw failure;
            }
            if (shared == null || shared.isClosed()) {
                try {
                    shared = RdmaManager.newBuilder().keepEndpointOnFailure().build();
                } catch (RuntimeException e) {
                    failure = e;
                    throw e;
                }
                RdmaManager m = shared;
                Runtime.getRuntime().addShutdownHook(new Thread(m::close, "rdma4j-shutdown"));
            }
            return shared;
        }
    }

    /** Keeps the control endpoint of a manager that failed to start up, answering probes, and its watchdog. */
    static void linger(ControlServer server, WatchdogThread watchdog) {
        LINGERING.add(() -> {
            server.close();
            watchdog.close();
        });
    }

    /** Closes the endpoints kept up by failed starts (tests). */
    static void closeLingeringEndpoints() {
        for (AutoCloseable c : LINGERING) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        LINGERING.clear();
    }
}
