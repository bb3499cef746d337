package io.rdma4j.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.rpc.RpcCallContext;
import org.apache.spark.rpc.RpcEndpoint;
import org.apache.spark.rpc.RpcEnv;
import org.apache.spark.rpc.ThreadSafeRpcEndpoint;
import scala.Function1;
import scala.PartialFunction;
import scala.runtime.AbstractPartialFunction;
import scala.runtime.BoxedUnit;

/**
 * The driver's RPC endpoint that keeps every map output's {@link MapOutputToken}, keyed by shuffle
 * id and map id.
 *
 * <p>Why here and not in the {@code MapStatus}: a {@code MapStatus} is a sealed Spark type whose
 * sizes are lossy (log-encoded, or averaged above 2000 partitions), and the tracker ships it
 * with Spark's own encoding; the token and the exact offsets travel next to it instead. An
 * executor sends an output's token before its map task returns the {@code MapStatus}, over the
 * same ordered connection to the driver, without waiting for the answer; this endpoint handles
 * messages in arrival order, so a reducer's lookup, which follows the status, finds the token (a
 * token the driver never got is a fetch failure, and Spark runs the map task again); a reducer
 * asks once per shuffle and caches the answer. The tracker stays the authority on
 * which outputs are live: a reducer only asks for the map ids the tracker names.
 */
final class TokenRegistry implements ThreadSafeRpcEndpoint {

    /** The endpoint's name in the driver's RpcEnv. */
    static final String NAME = "rdma4j-shuffle-tokens";

    private static final System.Logger LOG = System.getLogger(TokenRegistry.class.getName());

    private final RpcEnv rpcEnv;
    private final Map<Integer, Map<Long, MapOutputToken>> outputs = new ConcurrentHashMap<>();
    private final byte[] accumulators;

    /**
     * @param accumulators the driver's {@link RouteMetrics} accumulators, serialized, as executors
     *                     receive them
     */
    TokenRegistry(RpcEnv rpcEnv, byte[] accumulators) {
        this.rpcEnv = rpcEnv;
        this.accumulators = accumulators;
        RpcEndpoint.$init$(this);
    }

    @Override
    public RpcEnv rpcEnv() {
        return rpcEnv;
    }

    /** Forgets a shuffle's outputs (the driver's unregisterShuffle). */
    void remove(int shuffleId) {
        outputs.remove(shuffleId);
    }

    /** @return how many outputs of the shuffle are known */
    int outputCount(int shuffleId) {
        Map<Long, MapOutputToken> byMap = outputs.get(shuffleId);
        return byMap == null ? 0 : byMap.size();
    }

    void publish(int shuffleId, MapOutputToken output) {
        outputs.computeIfAbsent(shuffleId, id -> new ConcurrentHashMap<>()).put(output.mapId(), output);
    }

    HashMap<Long, MapOutputToken> lookup(int shuffleId) {
        Map<Long, MapOutputToken> byMap = outputs.get(shuffleId);
        return byMap == null ? new HashMap<>() : new HashMap<>(byMap);
    }

    static String describe(Map<String, long[]> byTransport) {
        StringBuilder sb = new StringBuilder();
        byTransport.forEach((t, c) -> sb.append(sb.isEmpty() ? "" : ", ").append(t).append(": ")
                .append(c[0]).append(" block(s), ").append(c[1]).append(" B"));
        return sb.toString();
    }

    @Override
    public PartialFunction<Object, BoxedUnit> receiveAndReply(RpcCallContext context) {
        return new AbstractPartialFunction<>() {
            @Override
            public boolean isDefinedAt(Object message) {
                return message instanceof RegistryMessages.Publish || message instanceof RegistryMessages.Lookup
                        || message instanceof RegistryMessages.Accumulators;
            }

            @Override
            public <A1, B1> B1 applyOrElse(A1 message, Function1<A1, B1> fallback) {
                if (message instanceof RegistryMessages.Publish p) {
                    publish(p.shuffleId(), p.output());
                    context.reply(Boolean.TRUE);
                } else if (message instanceof RegistryMessages.Lookup l) {
                    context.reply(lookup(l.shuffleId()));
                } else if (message instanceof RegistryMessages.Accumulators) {
                    context.reply(accumulators);
                } else {
                    return fallback.apply(message);
                }
                @SuppressWarnings("unchecked")
                B1 unit = (B1) BoxedUnit.UNIT;
                return unit;
            }
        };
    }
}
