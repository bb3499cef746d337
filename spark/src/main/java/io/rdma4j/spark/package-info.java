/**
 * A Spark shuffle manager whose reduce tasks fetch map output with one-sided rdma4j reads
 * ({@code spark.shuffle.manager=io.rdma4j.spark.RdmaShuffleManager}); how it works, its settings
 * and its failure semantics are in {@code docs/spark.md}. The classes, by where they run:
 *
 * <p><b>Both sides</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.RdmaShuffleManager}: the entry point Spark instantiates on the
 *       driver and on every executor; writes as Spark's sort shuffle, hands out the rdma4j
 *       writer and reader, releases a shuffle's buffers when Spark unregisters it.</li>
 * </ul>
 *
 * <p><b>Driver side</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.TokenRegistry}: the driver's RPC endpoint that keeps each map
 *       output's token and offsets, keyed by shuffle and map id, and answers executors'
 *       lookups.</li>
 *   <li>{@link io.rdma4j.spark.RegistryMessages}: the messages executors send that endpoint
 *       (publish, lookup, the route accumulators).</li>
 * </ul>
 *
 * <p><b>Executor, map side</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.RdmaShuffleWriter}: Spark's own sort-based writer, then the
 *       registration of the committed output and the publication of its token.</li>
 *   <li>{@link io.rdma4j.spark.ExecutorShuffleState}: what one process keeps: its
 *       {@code RdmaManager}, the buffers of its map outputs, the tokens it looked up, the reused
 *       staging buffers (used by the reduce side too).</li>
 *   <li>{@link io.rdma4j.spark.OwnedOutput}: one map output this process registered (a
 *       read-only mapping of the data file, or a copy) and its token; released once, when no local
 *       reader holds it.</li>
 *   <li>{@link io.rdma4j.spark.Holds}: the count of local readers that keeps an output's memory
 *       valid until the last one ends.</li>
 *   <li>{@link io.rdma4j.spark.MapOutputToken}: what a reducer needs to read one map output:
 *       the buffer's token and each partition's offsets.</li>
 * </ul>
 *
 * <p><b>Executor, reduce (fetch) side</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.RdmaShuffleReader}: a reduce task's read of its partition range:
 *       deserialization, aggregation and ordering as Spark's {@code BlockStoreShuffleReader}.</li>
 *   <li>{@link io.rdma4j.spark.BlockFetcher}: the one-sided reads, packed into actions with
 *       deadlines into reused staging memory; failures become Spark's fetch failures.</li>
 *   <li>{@link io.rdma4j.spark.PiecedRead}: a map output's range larger than a staging buffer,
 *       read in staging-size pieces, and the streams of its blocks over them.</li>
 *   <li>{@link io.rdma4j.spark.StagingBuffers}: the memory reducers read into: staging buffers
 *       of {@code fetchBufferSize}, reused; nothing larger.</li>
 * </ul>
 *
 * <p><b>Metrics</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.RouteMetrics}: the named accumulators of blocks and bytes read
 *       per route ({@code local}, {@code shm}, {@code tcp}, {@code ibverbs}, {@code other}).</li>
 * </ul>
 *
 * <p><b>Configuration</b>
 * <ul>
 *   <li>{@link io.rdma4j.spark.RdmaShuffleConf}: the {@code spark.rdma4j.shuffle.*} keys and the
 *       {@code spark.rdma4j.*} rdma4j settings each executor's manager is built with.</li>
 * </ul>
 */
package io.rdma4j.spark;
