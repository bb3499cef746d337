package io.rdma4j.spark;

import java.io.Serial;
import java.io.Serializable;
import java.util.Map;

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

    /**
     * What carried one reduce task's blocks (one-way).
     *
     * @param byTransport transport name ({@code local} for this executor's own outputs) to
     *                    {@code {blocks, bytes}}
     */
    record RouteReport(String executorId, int shuffleId, Map<String, long[]> byTransport) implements Serializable {
        @Serial
        private static final long serialVersionUID = 1L;
    }
}
