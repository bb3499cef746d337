package io.rdma4j.spark;

import java.io.Serial;
import java.io.Serializable;
import java.util.Arrays;

/**
 * What a reducer needs to read one map output: the token of the registered copy of the map
 * task's data file and where each partition starts in it.
 *
 * @param mapId      the map task's attempt id (Spark's {@code mapId})
 * @param executorId the executor that owns the buffer
 * @param token      {@link io.rdma4j.RdmaRemoteBuffer#toBytes()} of the buffer, or {@code null}
 *                   when every partition is empty (nothing was registered)
 * @param offsets    {@code numPartitions + 1} offsets: partition {@code p} is the bytes
 *                   {@code offsets[p]} (inclusive) to {@code offsets[p + 1]} (exclusive)
 */
public record MapOutputToken(long mapId, String executorId, byte[] token, long[] offsets) implements Serializable {

    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Offsets from partition lengths.
     *
     * @param lengths each partition's length in bytes, as the shuffle writer reports them
     * @return the {@code lengths.length + 1} offsets
     */
    public static long[] offsetsOf(long[] lengths) {
        long[] offsets = new long[lengths.length + 1];
        for (int p = 0; p < lengths.length; p++) {
            offsets[p + 1] = offsets[p] + lengths[p];
        }
        return offsets;
    }

    /** @return the number of partitions */
    public int numPartitions() {
        return offsets.length - 1;
    }

    @Override
    public String toString() {
        return "MapOutputToken[mapId=" + mapId + ", executor=" + executorId + ", bytes=" + offsets[offsets.length - 1]
                + ", partitions=" + numPartitions() + (token == null ? ", empty" : "") + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MapOutputToken t && t.mapId == mapId && t.executorId.equals(executorId)
                && Arrays.equals(t.token, token) && Arrays.equals(t.offsets, offsets);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(mapId) * 31 + Arrays.hashCode(offsets);
    }
}
