package io.rdma4j.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.util.LongAccumulator;

/**
 * What carried the shuffle blocks reduce tasks read, as Spark named accumulators: for each route
 * ({@link #ROUTES}: {@code local} for a reducer's own executor's outputs, {@code shm}, {@code tcp},
 * {@code ibverbs}, and {@code other} for an action whose reads went over more than one transport
 * or over one not listed) one accumulator of blocks and one of bytes, named
 * {@code "rdma4j shuffle blocks read over <route>"} and {@code "rdma4j shuffle bytes read over <route>"}.
 * They appear with each task's accumulables in {@code SparkListenerTaskEnd} events, in the stage
 * pages of Spark's UI, and in {@link RdmaShuffleManager#routes()} on the driver; like Spark's own
 * task metrics, a failed task's counts are not added.
 *
 * <p>The driver registers them with its {@code SparkContext} when the first shuffle is registered
 * and keeps them; executors get them serialized from the driver's {@link TokenRegistry}, and each
 * reduce task deserializes its own copies, which registers them with the task (as Spark does for
 * accumulators a task's closure carries), so their values travel back with the task's result.
 */
final class RouteMetrics {

    /** The routes counted, each with its own pair of accumulators. */
    static final List<String> ROUTES = List.of("local", "shm", "tcp", "ibverbs", "other");

    private RouteMetrics() {
    }

    static String name(String what, String route) {
        return "rdma4j shuffle " + what + " read over " + route;
    }

    /** Driver: registers the accumulators with the context. @return route to {blocks, bytes} */
    static LinkedHashMap<String, LongAccumulator[]> register(SparkContext sc) {
        LinkedHashMap<String, LongAccumulator[]> accumulators = new LinkedHashMap<>();
        for (String route : ROUTES) {
            accumulators.put(route, new LongAccumulator[] {
                    sc.longAccumulator(name("blocks", route)), sc.longAccumulator(name("bytes", route))});
        }
        return accumulators;
    }

    /** Driver: the accumulators as executors receive them. */
    static byte[] serialize(LinkedHashMap<String, LongAccumulator[]> accumulators) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(new HashMap<>(accumulators));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * Task: this task's own copies of the accumulators; deserializing them in the task's thread
     * registers them with the task.
     */
    @SuppressWarnings("unchecked")
    static Map<String, LongAccumulator[]> forTask(byte[] serialized) {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(serialized))) {
            return (Map<String, LongAccumulator[]>) in.readObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Task: adds a fetch's counts (route to {blocks, bytes}) to the task's accumulators. */
    static void add(Map<String, LongAccumulator[]> accumulators, Map<String, long[]> byRoute) {
        byRoute.forEach((route, counts) -> {
            LongAccumulator[] pair = accumulators.get(ROUTES.contains(route) ? route : "other");
            pair[0].add(counts[0]);
            pair[1].add(counts[1]);
        });
    }

    /** Driver: route to {blocks, bytes}, only routes that carried something. */
    static Map<String, long[]> values(Map<String, LongAccumulator[]> accumulators) {
        Map<String, long[]> values = new LinkedHashMap<>();
        accumulators.forEach((route, pair) -> {
            if (pair[0].value() > 0 || pair[1].value() > 0) {
                values.put(route, new long[] {pair[0].value(), pair[1].value()});
            }
        });
        return values;
    }
}
