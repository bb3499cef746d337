package io.rdma4j.spark;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.SparkConf;
import scala.Tuple2;

/**
 * The Spark configuration of the rdma4j shuffle.
 *
 * <p>Two kinds of keys:
 * <ul>
 *   <li>{@code spark.rdma4j.shuffle.*} configure the shuffle itself: {@code fetchTimeout} (the
 *       deadline of one fetch action, default {@code 60s}), {@code fetchBufferSize} (bytes of one
 *       reused staging buffer, default {@code 8m}: a reducer fills one while it deserializes the
 *       other, and reads a block larger than that in pieces of this size), {@code maxOpsPerAction} (map outputs one action reads, default {@code 256}),
 *       {@code mapOutputs} (how a committed map output is registered: {@code mapped}, the default,
 *       or {@code copied}; see {@link MapOutputs}).</li>
 *   <li>Every other {@code spark.rdma4j.X} is the rdma4j setting {@code rdma.X}, given to the
 *       executor's {@link RdmaManager} builder: {@code spark.rdma4j.tcp.parallelism=4} is
 *       {@code rdma.tcp.parallelism=4}, {@code spark.rdma4j.shm.disable=true} turns the
 *       same-host transport off. The builder validates them all, so a mistyped key or a bad value
 *       fails the executor's start with the builder's {@link IllegalArgumentException} instead of
 *       quietly changing transport.</li>
 * </ul>
 */
public final class RdmaShuffleConf {

    /** Prefix of every key this module reads. */
    public static final String PREFIX = "spark.rdma4j.";
    /** Prefix of the shuffle's own keys (not rdma4j settings). */
    public static final String SHUFFLE_PREFIX = PREFIX + "shuffle.";

    /** How an executor registers a committed map output with its {@link RdmaManager}. */
    public enum MapOutputs {
        /**
         * {@code mapped} (the default): the committed data file, mapped read-only and registered
         * read-only as it is (peers may only read it); no copy, and the memory is the page cache's.
         * Same-host readers read it with {@code process_vm_readv} where the ptrace policy allows it
         * (else through the owner's staging copy), verbs registers it for remote reads only (the
         * page cache's pages, pinned; on Linux before 6.2, which cannot pin read-only pages, the
         * executor maps privately instead, copy-on-write, still registered read-only), tcp sends from it.
         */
        MAPPED,
        /**
         * {@code copied}: a copy of the data file in memory from {@link RdmaManager#allocate(long)}
         * (on one host a sealed memory file readers map, under any ptrace policy); one pass over
         * the map output and its size in off-heap memory.
         */
        COPIED
    }

    private final MapOutputs mapOutputs;
    private final Duration fetchTimeout;
    private final long fetchBufferSize;
    private final int maxOpsPerAction;
    private final Map<String, String> managerSettings;

    /**
     * Reads the configuration.
     *
     * @param conf Spark's configuration
     * @throws IllegalArgumentException when a {@code spark.rdma4j.shuffle.*} key is unknown or its
     *                                  value out of range
     */
    public RdmaShuffleConf(SparkConf conf) {
        Map<String, String> settings = new TreeMap<>();
        for (Tuple2<String, String> entry : conf.getAllWithPrefix(PREFIX)) {
            String key = entry._1();
            if (key.startsWith("shuffle.")) {
                if (!key.equals("shuffle.fetchTimeout") && !key.equals("shuffle.fetchBufferSize")
                        && !key.equals("shuffle.maxOpsPerAction") && !key.equals("shuffle.mapOutputs")) {
                    throw new IllegalArgumentException("unknown setting " + PREFIX + key
                            + " (known: " + SHUFFLE_PREFIX + "fetchTimeout, fetchBufferSize, maxOpsPerAction, mapOutputs)");
                }
            } else {
                settings.put("rdma." + key, entry._2());
            }
        }
        this.managerSettings = Map.copyOf(settings);
        this.fetchTimeout = Duration.ofMillis(conf.getTimeAsMs(SHUFFLE_PREFIX + "fetchTimeout", "60s"));
        this.fetchBufferSize = conf.getSizeAsBytes(SHUFFLE_PREFIX + "fetchBufferSize", "8m");
        this.maxOpsPerAction = conf.getInt(SHUFFLE_PREFIX + "maxOpsPerAction", 256);
        String outputs = conf.get(SHUFFLE_PREFIX + "mapOutputs", "mapped");
        this.mapOutputs = switch (outputs) {
            case "mapped" -> MapOutputs.MAPPED;
            case "copied" -> MapOutputs.COPIED;
            default -> throw new IllegalArgumentException(SHUFFLE_PREFIX + "mapOutputs must be mapped or copied: " + outputs);
        };
        if (fetchTimeout.isZero() || fetchTimeout.isNegative()) {
            throw new IllegalArgumentException(SHUFFLE_PREFIX + "fetchTimeout must be positive: " + fetchTimeout);
        }
        if (fetchBufferSize < 4096 || fetchBufferSize > (1L << 30)) {
            throw new IllegalArgumentException(SHUFFLE_PREFIX + "fetchBufferSize must be 4k..1g: " + fetchBufferSize);
        }
        if (maxOpsPerAction < 1) {
            throw new IllegalArgumentException(SHUFFLE_PREFIX + "maxOpsPerAction must be at least 1: " + maxOpsPerAction);
        }
    }

    /** @return the deadline of one fetch action */
    public Duration fetchTimeout() {
        return fetchTimeout;
    }

    /** @return the size of one reused staging buffer, in bytes */
    public long fetchBufferSize() {
        return fetchBufferSize;
    }

    /** @return how many map outputs one action reads at most */
    public int maxOpsPerAction() {
        return maxOpsPerAction;
    }

    /** @return how committed map outputs are registered */
    public MapOutputs mapOutputs() {
        return mapOutputs;
    }

    /** @return the rdma4j settings ({@code rdma.*} keys) the Spark configuration gives */
    public Map<String, String> managerSettings() {
        return managerSettings;
    }

    /**
     * Builds this process's manager with {@link #managerSettings()}.
     *
     * @return a new manager, which the caller closes
     * @throws IllegalArgumentException when a setting is unknown or invalid
     * @throws io.rdma4j.TransportUnavailableException when no transport opens
     */
    public RdmaManager buildManager() {
        RdmaManagerBuilder builder = RdmaManager.newBuilder();
        managerSettings.forEach(builder::set);
        return builder.build();
    }
}
