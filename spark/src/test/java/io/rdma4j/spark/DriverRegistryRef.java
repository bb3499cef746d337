package io.rdma4j.spark;

import org.apache.spark.SparkConf;
import org.apache.spark.rpc.RpcAddress;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.rpc.RpcTimeout;
import scala.concurrent.Future;
import scala.reflect.ClassTag;

/**
 * A reference to a {@link TokenRegistry} in this JVM that answers asks at once, without an RPC
 * environment: what an executor's {@link ExecutorShuffleState} talks to in tests without a driver.
 */
final class DriverRegistryRef extends RpcEndpointRef {

    final TokenRegistry registry = new TokenRegistry(null, new byte[0]);

    DriverRegistryRef() {
        super(new SparkConf(false));
    }

    @Override
    public RpcAddress address() {
        return null;
    }

    @Override
    public String name() {
        return TokenRegistry.NAME;
    }

    @Override
    public void send(Object message) {
        throw new UnsupportedOperationException("the registry is only asked");
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> Future<T> ask(Object message, RpcTimeout timeout, ClassTag<T> tag) {
        Object answer;
        if (message instanceof RegistryMessages.Publish p) {
            registry.publish(p.shuffleId(), p.output());
            answer = Boolean.TRUE;
        } else if (message instanceof RegistryMessages.Lookup l) {
            answer = registry.lookup(l.shuffleId());
        } else {
            return scala.concurrent.Future$.MODULE$.failed(new IllegalArgumentException("unexpected message " + message));
        }
        return scala.concurrent.Future$.MODULE$.successful((T) answer);
    }
}
