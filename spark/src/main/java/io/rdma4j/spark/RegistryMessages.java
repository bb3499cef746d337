package io.rdma4j.spark;

import java.io.Serial;
import java.io.Serializable;

/** The messages of the driver's {@link TokenRegistry} endpoint (Java-serialized by Spark's RPC). */
final class RegistryMessages {

    private RegistryMessages() {
    }

    /** A map task's output, published before the task reports its MapStatus; answered with {@code true}. */
    record Publish(int shuffleId, MapOutputToken output) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }

    /** Every published output of a shuffle; answered with a {@code HashMap<Long, MapOutputToken>}. */
    record Lookup(int shuffleId) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }

    /** The driver's {@link RouteMetrics} accumulators; answered with their serialized form (a byte array). */
    record Accumulators() implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }
}
