package io.rdma4j.transport.tcp;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/** Managers and waiting helpers shared by the tests. */
final class TcpTesting {

    /** Generous bound for anything that should finish quickly; a safety net, never a synchroniser. */
    static final Duration SAFETY = Duration.ofSeconds(60);
    static final Duration TRANSFER_TIMEOUT = Duration.ofSeconds(30);
    static final long MIB = 1L << 20;

    private TcpTesting() {
    }

    /**
     * A manager that found its transports through {@link java.util.ServiceLoader}, isolated from
     * the environment, with 1 MiB chunks unless {@code settings} (key, value, ...) say otherwise.
     */
    static RdmaManager manager(String... settings) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().set("rdma.tcp.maxChunkMiB", "1");
        for (int i = 0; i < settings.length; i += 2) {
            b.set(settings[i], settings[i + 1]);
        }
        return b.build();
    }

    /** A manager plus its TCP transport, for tests that look inside (pool, threads). */
    record Instrumented(RdmaManager manager, TcpTransport transport) implements AutoCloseable {
        @Override
        public void close() {
            manager.close();
        }
    }

    static Instrumented instrumented(String... settings) {
        TcpTransportProvider provider = new TcpTransportProvider();
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated().providers(List.of(provider))
                .set("rdma.tcp.maxChunkMiB", "1");
        for (int i = 0; i < settings.length; i += 2) {
            b.set(settings[i], settings[i + 1]);
        }
        RdmaManager m = b.build();
        return new Instrumented(m, provider.lastOpened());
    }

    /** Waits for success. */
    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get(SAFETY.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("expected success, got: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("still not done after " + SAFETY);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** Waits for failure and returns its cause. */
    static Throwable failureOf(CompletableFuture<?> f) {
        try {
            f.get(SAFETY.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            throw new AssertionError("still not done after " + SAFETY + ": it hangs");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return fail("expected a failure, but it succeeded");
    }

    /** Waits until {@code condition} holds, re-checking it; fails after {@link #SAFETY}. */
    static void awaitCondition(String what, BooleanSupplier condition) {
        long end = System.nanoTime() + SAFETY.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                fail("gave up waiting for: " + what);
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }
}
