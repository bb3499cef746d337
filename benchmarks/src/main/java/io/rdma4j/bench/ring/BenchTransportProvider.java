package io.rdma4j.bench.ring;

import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Registered;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A transport that only remembers registrations, so a benchmark measures the manager's
 * bookkeeping and not a network: {@code register} stores the segment in a map and returns the
 * id as an 8-byte context, {@code release} forgets it, {@code submit} copies between the local
 * segment and a buffer of the same manager, on the calling thread.
 *
 * <p>Name {@code "bench"}, priority 1. Not registered with {@link java.util.ServiceLoader}:
 * pass it to {@code RdmaManager.newBuilder().providers(..)}. Backends follow the SPI's threading
 * contract: one registering thread at a time (the manager's ring consumer, or whoever holds the
 * baseline's lock).
 */
public final class BenchTransportProvider implements TransportProvider {

    /** The transport's name. */
    public static final String NAME = "bench";

    private final long registrationCostNanos;
    private final boolean preparesLocal;

    /** A transport whose registration costs nothing but a map insert. */
    public BenchTransportProvider() {
        this(0);
    }

    /**
     * A transport whose registration costs nothing but a map insert and that, when
     * {@code preparesLocal}, asks the manager to prepare ops' local memory (a handle that holds
     * nothing), as verbs does with memory regions: ops on unregistered memory then go through the
     * manager's local-memory cache.
     */
    public BenchTransportProvider(boolean preparesLocal) {
        this(0, preparesLocal);
    }

    /**
     * A transport whose every registration also burns {@code registrationCostNanos} of CPU, the way
     * {@code ibv_reg_mr} pins and maps pages (tens of microseconds for small buffers, milliseconds
     * for large ones).
     */
    public BenchTransportProvider(long registrationCostNanos) {
        this(registrationCostNanos, false);
    }

    private BenchTransportProvider(long registrationCostNanos, boolean preparesLocal) {
        this.registrationCostNanos = registrationCostNanos;
        this.preparesLocal = preparesLocal;
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return 1;
    }

    @Override
    public Availability availability(Settings settings) {
        return Availability.available();
    }

    @Override
    public Transport open(TransportContext context) {
        return new BenchTransport(registrationCostNanos, preparesLocal);
    }

    /** Opens a backend without a manager (for the synchronized baseline). */
    public Transport openStandalone() {
        return new BenchTransport(registrationCostNanos, false);
    }

    private static final class BenchTransport implements Transport {
        private final long costNanos;
        private final boolean preparesLocal;
        private final Map<Long, MemorySegment> registered = new ConcurrentHashMap<>();

        BenchTransport(long costNanos, boolean preparesLocal) {
            this.costNanos = costNanos;
            this.preparesLocal = preparesLocal;
        }

        @Override
        public boolean preparesLocalMemory() {
            return preparesLocal;
        }

        @Override
        public LocalMemory prepareLocal(MemorySegment segment) {
            if (!preparesLocal) {
                return null;
            }
            return new LocalMemory() {
                @Override
                public MemorySegment segment() {
                    return segment;
                }

                @Override
                public void close() {
                }
            };
        }

        @Override
        public String name() {
            return NAME;
        }

        @Override
        public Registered register(long bufferId, MemorySegment segment) {
            if (costNanos > 0) {
                long end = System.nanoTime() + costNanos;
                while (System.nanoTime() < end) {
                    Thread.onSpinWait();
                }
            }
            registered.put(bufferId, segment);
            return Registered.context(ByteBuffer.allocate(Long.BYTES).putLong(bufferId).array());
        }

        @Override
        public void release(long bufferId) {
            registered.remove(bufferId);
        }

        @Override
        public CompletableFuture<Void> submit(List<TransportOp> ops, Deadline deadline) {
            try {
                submitAndWait(ops, deadline);
                return CompletableFuture.completedFuture(null);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(e);
            }
        }

        /**
         * Decodes a token once, as a real transport does: its buffer's segment (the token names a
         * buffer of the manager that opened this transport; it must still be registered).
         */
        @Override
        public Object decodeContext(RemoteBufferRef remote) {
            MemorySegment segment = registered.get(ByteBuffer.wrap(remote.context()).getLong());
            if (segment == null) {
                throw new TransportException(TransportException.Kind.PEER_UNREACHABLE, "not a buffer of this process");
            }
            return segment;
        }

        /** Copies within this process, allocating nothing per op. */
        @Override
        public void submitAndWait(List<TransportOp> ops, Deadline deadline) {
            for (int i = 0, n = ops.size(); i < n; i++) {
                TransportOp op = ops.get(i);
                MemorySegment remote = (MemorySegment) op.remoteContext();
                if (op.type() == TransportOp.OpType.READ_INTO_LOCAL) {
                    MemorySegment.copy(remote, op.remoteOffset(), op.local(), 0, op.length());
                } else {
                    MemorySegment.copy(op.local(), 0, remote, op.remoteOffset(), op.length());
                }
            }
        }

        @Override
        public void close() {
            registered.clear();
        }
    }
}
