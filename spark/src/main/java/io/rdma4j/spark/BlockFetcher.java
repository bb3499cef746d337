package io.rdma4j.spark;

import io.rdma4j.RdmaAction;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.RdmaResult;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;

/**
 * Fetches a reduce task's blocks with one-sided reads and hands them out one at a time.
 *
 * <p>Each map output contributes one read: the bytes of the task's partition range, which are
 * contiguous in the map output. Reads are packed, in the order Spark listed the map outputs,
 * into actions of at most {@link RdmaShuffleConf#maxOpsPerAction()} reads and
 * {@link RdmaShuffleConf#fetchBufferSize()} bytes, each read landing in a reused staging buffer;
 * a read larger than one staging buffer is read in staging-size pieces, an action per piece
 * ({@link PiecedRead}), so that a reducer never needs more than its two staging buffers. While the
 * task deserializes one action's blocks (or one piece) the next action is already in flight; the
 * time the task waits for an action is its fetch wait time.
 *
 * <p>Failures: an action that fails (or misses its deadline) is followed by one read per map
 * output of the action, to name the output that cannot be read; the task then fails with Spark's
 * {@link FetchFailedException} for that map output, so the scheduler recomputes it; before that, a
 * read that failed asks the driver again for its map output's token, and reads the new token
 * once if the output was published anew (same map id, same bytes in the range: a re-run map task
 * with {@code spark.shuffle.useOldFetchProtocol}, whose older buffer its owner released). When every
 * one of those reads succeeds, their bytes are used. A map output whose token the driver does not
 * know, or whose token does not cover the partitions, fails the same way before anything is
 * read. Bytes are never handed out from an action that did not complete. A piece that fails
 * fails the same way, thrown from the read of the block stream that needed it.
 */
final class BlockFetcher {

    /** One map output's part of the fetch. */
    record MapRead(BlockManagerId address, long mapId, int mapIndex, MapOutputToken output,
                   int startPartition, int endPartition) {
        long from() {
            return output.offsets()[startPartition];
        }

        long length() {
            return output.offsets()[endPartition] - from();
        }
    }

    /** One block: its id and a stream over its bytes. */
    record Block(ShuffleBlockId id, InputStream stream) {
    }

    private final class Batch {
        /** Whole reads packed together, or the one read this batch is a piece of. */
        final List<MapRead> reads = new ArrayList<>();
        long bytes;
        /** Non-null for a piece of a larger read: which read, and which piece. */
        PiecedRead pieced;
        int piece;
        /** The staging buffer this batch reads into, taken when it starts, until {@link #free}. */
        MemorySegment memory;
        CompletableFuture<RdmaResult> future;

        void start() {
            memory = state.takeStaging(bytes);
            RdmaAction action = state.manager().newAction();
            if (pieced != null) {
                reads.set(0, pieced.read);          // the newest token (see retryOneByOne)
                action.readInto(remote(pieced.read, within(), bytes), memory.asSlice(0, bytes));
            } else {
                long at = 0;
                for (MapRead read : reads) {
                    action.readInto(remote(read, 0, read.length()), memory.asSlice(at, read.length()));
                    at += read.length();
                }
            }
            future = action.submitForResult(conf.fetchTimeout());
        }

        /** @return where this batch's bytes start in its (only) read's range: 0 unless a piece */
        long within() {
            return pieced == null ? 0 : pieced.offset(piece);
        }

        /** @return bytes of read {@code i} in this batch */
        long length(int i) {
            return pieced == null ? reads.get(i).length() : bytes;
        }

        void free() {
            CompletableFuture<RdmaResult> f = future;
            if (f != null && !f.isDone()) {
                f.cancel(true);
            }
            if (memory != null) {
                state.returnStaging(memory);
                memory = null;
            }
        }
    }

    private final ExecutorShuffleState state;
    private final RdmaShuffleConf conf;
    private final int shuffleId;
    private final ShuffleReadMetricsReporter metrics;
    private final Deque<Block> ready = new ArrayDeque<>();
    private final Deque<Batch> planned = new ArrayDeque<>();
    private final Map<String, long[]> routes = new HashMap<>();
    /** This process's own map outputs read in place, held until {@link #free()}. */
    private final List<OwnedOutput> held = new ArrayList<>();
    private Batch current;
    private Batch next;
    /** The larger read whose pieces the blocks handed out last read through. */
    private PiecedRead pieced;
    private boolean freed;

    /**
     * Plans the fetch; local map outputs (this process's own buffers) become blocks at once,
     * remote ones are packed into actions, the first of which starts now.
     */
    BlockFetcher(ExecutorShuffleState state, int shuffleId, List<MapRead> reads, ShuffleReadMetricsReporter metrics) {
        this.state = state;
        this.conf = state.conf();
        this.shuffleId = shuffleId;
        this.metrics = metrics;
        try {
            Batch batch = null;
            for (MapRead read : reads) {
                if (read.length() == 0) {
                    continue;
                }
                OwnedOutput local = state.holdOwnedOutput(shuffleId, read.mapId());
                if (local != null) {
                    held.add(local);
                    addBlocks(read, local.segment().asSlice(read.from(), read.length()), false);
                    count("local", blocksIn(read), read.length());
                    continue;
                }
                if (read.output().token() == null) {
                    throw sneaky(fetchFailed(read, "the map output was published empty but holds "
                            + read.length() + " B for partitions " + read.startPartition() + ".." + read.endPartition(), null));
                }
                if (read.length() > conf.fetchBufferSize()) {
                    planPieces(read);
                    batch = null;
                    continue;
                }
                if (batch == null || batch.reads.size() >= conf.maxOpsPerAction()
                        || (batch.bytes + read.length() > conf.fetchBufferSize() && !batch.reads.isEmpty())) {
                    batch = new Batch();
                    planned.add(batch);
                }
                batch.reads.add(read);
                batch.bytes += read.length();
            }
            if (!planned.isEmpty()) {
                next = planned.poll();
                next.start();
            }
        } catch (Throwable e) {     // a fetch failure (thrown unchecked) included
            free();                 // the held local outputs and a started action: the task never gets this fetcher
            throw sneaky(e);
        }
    }

    /** A batch per staging-size piece of a read larger than a staging buffer. */
    private void planPieces(MapRead read) {
        PiecedRead large = new PiecedRead(read, conf.fetchBufferSize(), this::nextPiece);
        for (int i = 0; i < large.pieces(); i++) {
            Batch piece = new Batch();
            piece.pieced = large;
            piece.piece = i;
            piece.bytes = large.pieceLength(i);
            piece.reads.add(read);
            planned.add(piece);
        }
    }

    private static RdmaRemoteBuffer remote(MapRead read, long within, long length) {
        RdmaRemoteBuffer whole = RdmaRemoteBuffer.fromBytes(read.output().token());
        return whole.slice(read.from() + within, length);
    }

    /** Gives the current action's memory back, waits for the next one and starts the one after. */
    private void advance() {
        if (current != null) {
            current.free();
        }
        current = next;
        next = null;
        awaitBatch(current);
        if (!planned.isEmpty()) {
            next = planned.poll();
            next.start();
        }
    }

    /** {@link PiecedRead.Pieces#next}: the next action is that read's next piece. */
    private void nextPiece(PiecedRead read) {
        if (freed || next == null || next.pieced != read) {
            throw new IllegalStateException("no further piece of map output " + read.read.mapId() + " in flight");
        }
        advance();
        read.arrived(current.piece, current.memory.asSlice(0, current.bytes));
    }

    /**
     * @return the next block, or null when every block was handed out
     * @throws FetchFailedException (thrown unchecked) when a map output cannot be read
     */
    Block nextBlock() {
        while (ready.isEmpty()) {
            if (pieced != null) {
                PiecedRead done = pieced;
                pieced = null;
                done.skipRest();            // a block left unfinished: its read's remaining pieces
            }
            if (next == null) {
                return null;
            }
            advance();
            if (current.pieced != null) {
                pieced = current.pieced;
                pieced.arrived(current.piece, current.memory.asSlice(0, current.bytes));
                addPiecedBlocks(pieced);
                continue;
            }
            long at = 0;
            for (MapRead read : current.reads) {
                addBlocks(read, current.memory.asSlice(at, read.length()), true);
                at += read.length();
            }
        }
        return ready.poll();
    }

    private void awaitBatch(Batch batch) {
        long start = System.nanoTime();
        RdmaResult result;
        try {
            result = batch.future.get(conf.fetchTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            batch.future.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while fetching shuffle " + shuffleId + " blocks", e);
        } catch (ExecutionException | TimeoutException | CancellationException e) {
            batch.future.cancel(true);
            result = retryOneByOne(batch, e instanceof ExecutionException ? e.getCause() : e);
        } finally {
            metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
        String route = String.join("+", result.transports());
        if (batch.pieced != null) {             // a piece: the blocks that end in it count as fetched
            long blocks = blocksEndingIn(batch.reads.getFirst(), batch.within(), batch.within() + batch.bytes);
            metrics.incRemoteBlocksFetched(blocks);
            metrics.incRemoteBytesRead(batch.bytes);
            count(route, blocks, batch.bytes);
            return;
        }
        for (MapRead read : batch.reads) {
            count(route, blocksIn(read), read.length());
        }
    }

    /**
     * Reads each map output of a failed action on its own; the first that fails is the fetch
     * failure, unless the driver now has another token for that map output (published anew under
     * the same map id, the older buffer released) covering the same bytes: then that one is read.
     */
    private RdmaResult retryOneByOne(Batch batch, Throwable batchFailure) {
        List<String> transports = new ArrayList<>();
        long at = 0;
        for (int i = 0; i < batch.reads.size(); i++) {
            MapRead read = batch.reads.get(i);
            long length = batch.length(i);
            MemorySegment into = batch.memory.asSlice(at, length);
            Throwable failure = readAlone(batch, read, batch.within(), into, transports);
            if (failure != null) {
                MapOutputToken fresh;
                try {
                    fresh = state.refreshToken(shuffleId, read.mapId(), read.output());
                } catch (RuntimeException e) {       // the driver did not answer: the read's failure stands
                    failure.addSuppressed(e);
                    fresh = null;
                }
                if (fresh != null && fresh.token() != null && !java.util.Arrays.equals(fresh.token(), read.output().token())
                        && fresh.numPartitions() >= read.endPartition()) {
                    MapRead renewed = new MapRead(read.address(), read.mapId(), read.mapIndex(), fresh,
                            read.startPartition(), read.endPartition());
                    if (renewed.length() == read.length()
                            && readAlone(batch, renewed, batch.within(), into, transports) == null) {
                        batch.reads.set(i, renewed);
                        if (batch.pieced != null) {
                            batch.pieced.read = renewed;        // its later pieces read the new token too
                        }
                        failure = null;
                    }
                }
            }
            if (failure != null) {
                throw sneaky(fetchFailed(read, "rdma4j read of " + length + " B failed: " + failure, failure));
            }
            at += length;
        }
        return new RdmaResult(transports, batch.reads.size(), batch.bytes, java.time.Duration.ZERO);
    }

    /** @return null when the read landed in {@code into}, else why it failed */
    private Throwable readAlone(Batch batch, MapRead read, long within, MemorySegment into, List<String> transports) {
        CompletableFuture<RdmaResult> single = state.manager().newAction()
                .readInto(remote(read, within, into.byteSize()), into)
                .submitForResult(conf.fetchTimeout());
        batch.future = single;
        try {
            RdmaResult r = single.get(conf.fetchTimeout().toMillis() + 5_000, TimeUnit.MILLISECONDS);
            r.transports().stream().filter(t -> !transports.contains(t)).forEach(transports::add);
            return null;
        } catch (InterruptedException e) {
            single.cancel(true);
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while fetching shuffle " + shuffleId + " blocks", e);
        } catch (ExecutionException | TimeoutException | CancellationException e) {
            single.cancel(true);
            return e instanceof ExecutionException ? e.getCause() : e;
        }
    }

    private void addBlocks(MapRead read, MemorySegment bytes, boolean remote) {
        long[] offsets = read.output().offsets();
        long base = offsets[read.startPartition()];
        for (int p = read.startPartition(); p < read.endPartition(); p++) {
            long length = offsets[p + 1] - offsets[p];
            if (length == 0) {
                continue;
            }
            ByteBuffer view = bytes.asSlice(offsets[p] - base, length).asByteBuffer();
            ready.add(new Block(new ShuffleBlockId(shuffleId, read.mapId(), p), new SegmentInputStream(view)));
            if (remote) {
                metrics.incRemoteBlocksFetched(1);
                metrics.incRemoteBytesRead(length);
            } else {
                metrics.incLocalBlocksFetched(1);
                metrics.incLocalBytesRead(length);
            }
        }
    }

    /** The blocks of a larger read, each a stream through its pieces; counted as fetched when their last piece arrives. */
    private void addPiecedBlocks(PiecedRead large) {
        MapRead read = large.read;
        long[] offsets = read.output().offsets();
        long base = offsets[read.startPartition()];
        for (int p = read.startPartition(); p < read.endPartition(); p++) {
            if (offsets[p + 1] > offsets[p]) {
                ready.add(new Block(new ShuffleBlockId(shuffleId, read.mapId(), p),
                        large.stream(offsets[p] - base, offsets[p + 1] - base)));
            }
        }
    }

    private static long blocksIn(MapRead read) {
        return blocksEndingIn(read, 0, read.length());
    }

    /** @return the non-empty blocks of the read whose last byte lies in the range's bytes {@code [from, to)} */
    private static long blocksEndingIn(MapRead read, long from, long to) {
        long[] offsets = read.output().offsets();
        long base = offsets[read.startPartition()];
        long n = 0;
        for (int p = read.startPartition(); p < read.endPartition(); p++) {
            long end = offsets[p + 1] - base;
            if (offsets[p + 1] > offsets[p] && end > from && end <= to) {
                n++;
            }
        }
        return n;
    }

    private void count(String route, long blocks, long bytes) {
        long[] c = routes.computeIfAbsent(route, r -> new long[2]);
        c[0] += blocks;
        c[1] += bytes;
    }

    /** @return transport name ({@code local} for this process's own outputs) to {blocks, bytes} so far */
    Map<String, long[]> routes() {
        return routes;
    }

    FetchFailedException fetchFailed(MapRead read, String message, Throwable cause) {
        return new FetchFailedException(read.address(), shuffleId, read.mapId(), read.mapIndex(),
                read.startPartition(), message, cause);
    }

    /** Cancels what is in flight and gives the memory back; idempotent. */
    void free() {
        if (freed) {
            return;
        }
        freed = true;
        ready.clear();
        for (Batch b : new Batch[] {current, next}) {
            if (b != null) {
                b.free();
                if (b.pieced != null) {
                    b.pieced.close();
                }
            }
        }
        if (pieced != null) {
            pieced.close();
        }
        planned.clear();
        for (OwnedOutput output : held) {
            try {
                output.unhold();
            } catch (Exception e) {
                System.getLogger(BlockFetcher.class.getName()).log(System.Logger.Level.WARNING,
                        "releasing a replaced map output of shuffle " + shuffleId + " failed (its memory is freed anyway)", e);
            }
        }
        held.clear();
    }

    @SuppressWarnings("unchecked")
    static <E extends Throwable> RuntimeException sneaky(Throwable t) throws E {
        throw (E) t;
    }

    /** An input stream over a block's bytes. */
    static final class SegmentInputStream extends InputStream {
        private final ByteBuffer buffer;

        SegmentInputStream(ByteBuffer buffer) {
            this.buffer = buffer;
        }

        @Override
        public int read() {
            return buffer.hasRemaining() ? buffer.get() & 0xff : -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            java.util.Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (!buffer.hasRemaining()) {
                return -1;
            }
            int n = Math.min(len, buffer.remaining());
            buffer.get(b, off, n);
            return n;
        }

        @Override
        public long skip(long n) {
            int k = (int) Math.max(0, Math.min(n, buffer.remaining()));
            buffer.position(buffer.position() + k);
            return k;
        }

        @Override
        public int available() {
            return buffer.remaining();
        }
    }
}
