package io.rdma4j.spark;

import org.apache.spark.SparkConf;

/** The configuration of the tests' Spark clusters. */
final class SparkTestConf {

    private SparkTestConf() {
    }

    /**
     * A local cluster of two executors, each in its own JVM, shuffling through rdma4j.
     *
     * <p>The workers start executors with this JVM's class path (Spark hands it on when the
     * {@code spark.testing} property is set, as the build sets it) and with the JDK this JVM runs
     * on: the {@code JAVA_HOME} of the executors' environment, which Spark's launcher prefers to
     * its own. Spark adds its {@code --add-opens} list to executors itself.
     */
    static SparkConf localCluster(String appName) {
        return applyTo(new SparkConf().setMaster("local-cluster[2,1,1024]").setAppName(appName)
                .set("spark.ui.enabled", "false"));
    }

    /** Adds to {@code conf} what an rdma4j local cluster needs (see {@link #localCluster}). */
    static SparkConf applyTo(SparkConf conf) {
        return conf.set("spark.shuffle.manager", RdmaShuffleManager.class.getName())
                .set("spark.executorEnv.JAVA_HOME", System.getProperty("java.home"))
                .set("spark.executor.extraJavaOptions", "--enable-native-access=ALL-UNNAMED"
                        // tests on two cores: executors live seconds, C1 and one GC thread suffice
                        + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    }
}
