package io.rdma4j;

import io.rdma4j.internal.Errors;
import io.rdma4j.internal.control.ControlClient;
import io.rdma4j.internal.control.ControlService;
import io.rdma4j.internal.registration.RegistrationTable;
import io.rdma4j.spi.ControlChannel;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.Endpoint;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/**
 * The control service: what a manager answers on its control endpoint (remote releases, readiness
 * probes, and requests that a peer's transport addresses to the same transport here), and the
 * {@link ControlChannel} each transport gets for its own requests. Called on the control
 * server's virtual threads, concurrently.
 */
final class ManagerControl implements ControlService {

    private static final Duration RELEASE_TIMEOUT = Duration.ofSeconds(30);

    private final RegistrationTable table;
    private final Map<String, ControlChannel.Handler> handlers = new ConcurrentHashMap<>();
    private volatile Endpoint endpoint;
    private volatile LongFunction<CompletableFuture<Void>> release;
    private volatile PeerReadiness.State state = PeerReadiness.State.STARTING;
    private volatile String detail = "";

    ManagerControl(RegistrationTable table) {
        this.table = table;
    }

    /** Once the endpoint is bound: the address readiness answers carry. */
    void endpoint(Endpoint endpoint) {
        this.endpoint = endpoint;
    }

    /** Once the registration ring runs: how a remote release is carried out. */
    void releaseWith(LongFunction<CompletableFuture<Void>> release) {
        this.release = release;
    }

    void ready() {
        state = PeerReadiness.State.READY;
    }

    void failed(String why) {
        detail = why;
        state = PeerReadiness.State.FAILED;
    }

    @Override
    public void release(byte[] incarnation, long bufferId, byte[] accessKey) throws Exception {
        RdmaEvents.ControlRequest event = new RdmaEvents.ControlRequest();
        event.begin();
        Throwable failure = null;
        try {
            releaseNow(incarnation, bufferId, accessKey);
        } catch (Exception | Error e) {
            failure = e;
            throw e;
        } finally {
            commit(event, "release", null, failure);
        }
    }

    private static void commit(RdmaEvents.ControlRequest event, String request, Endpoint peer, Throwable failure) {
        if (event.shouldCommit()) {
            event.request = request;
            event.peer = peer == null ? "" : peer.toString();
            event.outcome = RdmaEvents.outcome(failure);
            event.commit();
        }
    }

    private void releaseNow(byte[] incarnation, long bufferId, byte[] accessKey) throws Exception {
        table.lookup(incarnation, bufferId, accessKey, 0, 1); // refuses stale, unknown, released and wrong-key alike
        LongFunction<CompletableFuture<Void>> r = release;
        if (r == null) {
            throw RegistrationTable.denied(bufferId); // not started: nothing is registered
        }
        try {
            r.apply(bufferId).get(RELEASE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = Errors.unwrap(e);
            throw cause instanceof Exception ex ? ex : e;
        }
    }

    @Override
    public PeerReadiness readiness() {
        RdmaEvents.ControlRequest event = new RdmaEvents.ControlRequest();
        event.begin();
        Endpoint e = endpoint;
        PeerReadiness answer = new PeerReadiness(e != null ? e : new Endpoint("unknown", 1), state, detail);
        commit(event, "readiness", null, null);
        return answer;
    }

    @Override
    public byte[] transportRequest(String transport, Endpoint from, byte[] payload) throws Exception {
        RdmaEvents.ControlRequest event = new RdmaEvents.ControlRequest();
        event.begin();
        Throwable failure = null;
        try {
            ControlChannel.Handler h = handlers.get(transport);
            if (h == null) {
                throw new IllegalArgumentException("no transport named " + transport + " handles control requests here");
            }
            return h.handle(from, payload);
        } catch (Exception | Error e) {
            failure = e;
            throw e;
        } finally {
            commit(event, "transport:" + transport, from, failure);
        }
    }

    /** Asks each distinct peer, all under one deadline, whether it is ready; never fails. */
    static CompletableFuture<Map<Endpoint, PeerReadiness>> probeReadiness(ControlClient client, Collection<Endpoint> peers,
                                                                         Deadline deadline) {
        Map<Endpoint, CompletableFuture<PeerReadiness>> asks = new LinkedHashMap<>();
        for (Endpoint peer : peers) {
            asks.computeIfAbsent(peer, p -> client.readiness(p, deadline)
                    .exceptionally(t -> new PeerReadiness(p, PeerReadiness.State.UNREACHABLE, String.valueOf(Errors.unwrap(t)))));
        }
        return CompletableFuture.allOf(asks.values().toArray(CompletableFuture[]::new)).thenApply(x -> {
            Map<Endpoint, PeerReadiness> out = new LinkedHashMap<>();
            asks.forEach((p, f) -> out.put(p, f.join()));
            return out;
        });
    }

    /** Forgets what a transport that failed to open installed. */
    void forget(String transport) {
        handlers.remove(transport);
    }

    /** The control channel of transport {@code name}, sending through {@code client}. */
    ControlChannel channel(String name, ControlClient client) {
        return new ControlChannel() {
            @Override
            public void onRequest(Handler handler) {
                if (handlers.putIfAbsent(name, Objects.requireNonNull(handler, "handler")) != null) {
                    throw new IllegalStateException("transport " + name + " already installed a control handler");
                }
            }

            @Override
            public CompletableFuture<byte[]> request(Endpoint peer, byte[] payload, Deadline deadline) {
                if (payload.length > MAX_PAYLOAD_BYTES) {
                    throw new IllegalArgumentException("control payload of " + payload.length + " bytes exceeds "
                            + MAX_PAYLOAD_BYTES);
                }
                return client.transportRequest(peer, name, payload, deadline);
            }
        };
    }
}
