package io.rdma4j;

import io.rdma4j.internal.registration.Registration;
import io.rdma4j.internal.registration.RegistrationRing;
import io.rdma4j.internal.registration.RegistrationTable;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Registered;

import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Registration: runs on the registration ring's single consumer thread only. Assigns ids and
 * keys, registers each segment with every transport in priority order (skipping those that answer
 * "not applicable"), rolls back on the first real failure, releases, and at close releases
 * everything and closes the transports in reverse order.
 */
final class Registrar implements RegistrationRing.Worker {

    private static final System.Logger LOG = System.getLogger(RdmaManager.class.getName());

    private final byte[] incarnation;
    private final Endpoint controlEndpoint;
    private final RegistrationTable table;
    private final List<OpenTransport> transports;
    private final Map<String, OpenTransport> byName = new HashMap<>();
    private final Supplier<RuntimeException> closedError;
    private final SecureRandom random = new SecureRandom();
    private boolean shutDown;

    Registrar(byte[] incarnation, Endpoint controlEndpoint, RegistrationTable table, List<OpenTransport> transports,
              Supplier<RuntimeException> closedError) {
        this.incarnation = incarnation.clone();
        this.controlEndpoint = controlEndpoint;
        this.table = table;
        this.transports = transports;
        this.closedError = closedError;
        transports.forEach(t -> byName.put(t.name(), t));
    }

    @Override
    public void register(MemorySegment segment, Arena ownedArena, CompletableFuture<Object> result) {
        if (shutDown) {
            closeQuietly(ownedArena);
            result.completeExceptionally(closedError.get());
            return;
        }
        long id = table.nextId();
        if (!segment.scope().isAlive()) {
            result.completeExceptionally(new IllegalArgumentException(
                    "the segment's arena was closed before buffer " + id + " could be registered"));
            return;
        }
        byte[] key = new byte[RdmaRemoteBuffer.KEY_BYTES];
        random.nextBytes(key);
        Map<String, byte[]> contexts = new LinkedHashMap<>();
        Map<String, LocalMemory> localMemory = new HashMap<>();
        Map<String, String> notApplicable = new LinkedHashMap<>();
        List<String> done = new ArrayList<>();
        for (OpenTransport t : transports) {
            Registered r;
            try {
                r = Objects.requireNonNull(t.transport().register(id, segment), "the transport answered null");
            } catch (Throwable e) {
                rollBack(id, done, ownedArena);
                result.completeExceptionally(new RegistrationException(t.name(), "registering buffer " + id + " ("
                        + segment.byteSize() + " bytes) with " + t.name() + " failed: " + e.getMessage(), e));
                return;
            }
            if (!r.applicable()) {
                notApplicable.put(t.name(), r.notApplicableReason());
                LOG.log(Level.DEBUG, () -> "buffer " + id + ": " + t.name() + " not applicable: " + r.notApplicableReason());
                continue;
            }
            done.add(t.name());
            contexts.put(t.name(), r.contextBytes());
            if (r.localMemory() != null) {
                localMemory.put(t.name(), r.localMemory());
            }
        }
        if (done.isEmpty()) {
            closeQuietly(ownedArena);
            StringBuilder sb = new StringBuilder("no transport can serve buffer " + id + " (" + segment.byteSize() + " bytes):");
            notApplicable.forEach((n, why) -> sb.append(' ').append(n).append(": ").append(why).append(';'));
            sb.setLength(sb.length() - 1);
            result.completeExceptionally(new RegistrationException(null, sb.toString(), null));
            return;
        }
        RdmaRemoteBuffer token;
        try {
            token = new RdmaRemoteBuffer(incarnation, controlEndpoint, id, 0, segment.byteSize(), key, contexts,
                    segment.isReadOnly());
        } catch (RuntimeException e) { // e.g. more transports than a token can carry
            rollBack(id, done, ownedArena);
            result.completeExceptionally(new RegistrationException(null, "buffer " + id
                    + " cannot be described by a token: " + e.getMessage(), e));
            return;
        }
        table.put(new Registration(id, segment, key, ownedArena, done, localMemory));
        result.complete(token);
    }

    /** Releases {@code id} from the transports that registered it (errors only logged), frees owned memory. */
    private void rollBack(long id, List<String> done, Arena ownedArena) {
        for (String name : done) {
            try {
                byName.get(name).transport().release(id);
            } catch (Throwable rollback) {
                LOG.log(Level.WARNING, "rolling back buffer " + id + " on " + name + " failed", rollback);
            }
        }
        closeQuietly(ownedArena);
    }

    @Override
    public void release(long id, CompletableFuture<Object> result) {
        Registration r = table.remove(id);
        if (r == null) {
            result.complete(null);
            return;
        }
        Map<String, Throwable> failures = releaseEverywhere(r);
        if (failures.isEmpty()) {
            result.complete(null);
        } else {
            result.completeExceptionally(new RdmaReleaseException(failures));
        }
    }

    private Map<String, Throwable> releaseEverywhere(Registration r) {
        r.markReleased();
        Map<String, Throwable> failures = new LinkedHashMap<>();
        for (String name : r.transports()) {
            try {
                byName.get(name).transport().release(r.id());
            } catch (Throwable t) {
                failures.put(name, t);
            }
        }
        r.transportsReleased();
        return failures;
    }

    @Override
    public void close(CompletableFuture<Object> result) {
        shutDown = true;
        for (Registration r : table.snapshot()) {
            table.remove(r.id());
            Map<String, Throwable> failures = releaseEverywhere(r);
            if (!failures.isEmpty()) {
                LOG.log(Level.WARNING, "at close: " + new RdmaReleaseException(failures).getMessage());
            }
        }
        for (int i = transports.size() - 1; i >= 0; i--) {
            OpenTransport t = transports.get(i);
            if (t.local() != null) {
                t.local().clear();
            }
            try {
                t.transport().close();
            } catch (Throwable e) {
                LOG.log(Level.WARNING, "closing transport " + t.name() + " failed", e);
            }
        }
        result.complete(null);
    }

    /**
     * Memory for {@code RdmaManager.allocate}: from the first transport that offers it, else plain
     * page-aligned native memory; either way its lifetime is {@code arena}'s. Runs on the caller's thread.
     */
    static MemorySegment allocate(List<OpenTransport> transports, Arena arena, long size) {
        for (OpenTransport t : transports) {
            MemorySegment offered;
            try {
                offered = t.transport().allocate(size, arena);
            } catch (Exception e) {
                throw new RdmaException(t.name(), t.name() + " failed to provide " + size + " bytes: " + e.getMessage(), e);
            }
            if (offered != null) {
                if (offered.byteSize() != size || !offered.isNative() || !Segments.isShared(offered)) {
                    throw new RdmaException(t.name(), t.name() + " provided unusable memory for " + size + " bytes: " + offered, null);
                }
                return offered;
            }
        }
        return arena.allocate(size, 4096);
    }

    static void closeQuietly(Arena arena) {
        if (arena != null) {
            arena.close();
        }
    }
}
