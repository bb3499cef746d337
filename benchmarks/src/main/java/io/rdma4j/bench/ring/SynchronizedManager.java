package io.rdma4j.bench.ring;

import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Transport;

import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The baseline for {@link RegistrationRingBenchmark}: the registration work of
 * {@code RdmaManager} done on the caller's thread under one lock, the way a straightforward
 * manager would. Per registration it takes an id, draws a 16-byte access key from
 * {@link SecureRandom}, calls the backend, records the entry and builds a token holding copies of
 * the same fields as an {@link RdmaRemoteBuffer}. Thread-safe (one monitor).
 */
final class SynchronizedManager implements AutoCloseable {

    /** What a registration hands back: the fields of a real token. */
    record Token(byte[] incarnation, long id, long size, byte[] accessKey, Map<String, byte[]> contexts) {
    }

    private record Entry(MemorySegment segment, byte[] accessKey) {
    }

    private final Transport backend;
    private final SecureRandom random = new SecureRandom();
    private final byte[] incarnation = new byte[RdmaRemoteBuffer.KEY_BYTES];
    private final Map<Long, Entry> table = new HashMap<>();
    private long nextId;

    SynchronizedManager(Transport backend) {
        this.backend = backend;
        random.nextBytes(incarnation);
    }

    /** Registers {@code segment}; the future is complete when this returns. */
    CompletableFuture<Token> register(MemorySegment segment) {
        if (!segment.isNative() || segment.byteSize() == 0 || segment.isReadOnly() || !segment.scope().isAlive()) {
            throw new IllegalArgumentException("not a registrable segment");
        }
        synchronized (this) {
            long id = nextId++;
            byte[] key = new byte[RdmaRemoteBuffer.KEY_BYTES];
            random.nextBytes(key);
            byte[] context;
            try {
                context = backend.register(id, segment).contextBytes();
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
            Map<String, byte[]> contexts = new LinkedHashMap<>();
            contexts.put(backend.name(), context.clone());
            table.put(id, new Entry(segment, key));
            return CompletableFuture.completedFuture(new Token(incarnation.clone(), id, segment.byteSize(), key.clone(),
                    contexts));
        }
    }

    /** Releases buffer {@code id}; done when this returns. */
    CompletableFuture<Void> release(long id) {
        synchronized (this) {
            if (table.remove(id) != null) {
                try {
                    backend.release(id);
                } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                }
            }
        }
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized void close() {
        table.keySet().forEach(id -> {
            try {
                backend.release(id);
            } catch (Exception ignored) {
                // closing anyway
            }
        });
        table.clear();
        backend.close();
    }
}
