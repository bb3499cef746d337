package io.rdma4j.spark;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * One map output's range larger than a staging buffer, read in staging-size pieces: one action
 * per piece, in order, each into a reused staging buffer, and the streams of its blocks reading
 * through the pieces as they arrive. The {@link BlockFetcher} that planned it runs the actions
 * (one piece being read by the task while the next is in flight) and hands the pieces over with
 * {@link #arrived}; a block's stream that reaches the end of the piece it reads asks the fetcher
 * for the next one, which waits for it (fetch wait time) and gives the previous piece's memory back.
 *
 * <p>Failures: a piece whose read fails becomes the fetcher's {@code FetchFailedException} for
 * this map output, thrown (unchecked) from the block stream's {@code read}, in the task's thread,
 * so the task fails with Spark's fetch failure; bytes are handed out only from pieces that
 * arrived whole. Blocks are read in order: a stream asked for bytes behind the current piece, or
 * read after the fetch was freed, throws {@link IllegalStateException} rather than hand out
 * memory that holds another piece.
 */
final class PiecedRead {

    /** The fetcher's side: the actions that read the pieces. */
    interface Pieces {
        /**
         * Waits for the next piece of {@code read} and hands it over with {@link #arrived}; the
         * current piece's memory is given back.
         *
         * @throws org.apache.spark.shuffle.FetchFailedException (unchecked) when the piece cannot be read
         */
        void next(PiecedRead read);
    }

    /** The map output's range; a token published anew for the same bytes replaces it (see {@code BlockFetcher}). */
    BlockFetcher.MapRead read;
    private final long pieceSize;
    private final Pieces source;
    private ByteBuffer piece;
    private long pieceAt;
    private int index = -1;
    private boolean closed;

    PiecedRead(BlockFetcher.MapRead read, long pieceSize, Pieces source) {
        this.read = read;
        this.pieceSize = pieceSize;
        this.source = source;
    }

    int pieces() {
        return (int) ((read.length() + pieceSize - 1) / pieceSize);
    }

    /** @return where piece {@code i} starts in the range */
    long offset(int i) {
        return i * pieceSize;
    }

    long pieceLength(int i) {
        return Math.min(pieceSize, read.length() - offset(i));
    }

    /** Piece {@code i} (the one after the last) arrived whole in {@code bytes}, valid until the next one arrives. */
    void arrived(int i, MemorySegment bytes) {
        if (i != index + 1) {
            throw new IllegalStateException("piece " + i + " of map output " + read.mapId() + " after piece " + index);
        }
        index = i;
        pieceAt = offset(i);
        piece = bytes.asByteBuffer();
    }

    /** Waits for the pieces not arrived yet and drops them: a block left unfinished is skipped (a failure still fails). */
    void skipRest() {
        while (index < pieces() - 1) {
            source.next(this);
        }
    }

    /** The fetch was freed: the streams throw from now on. */
    void close() {
        closed = true;
        piece = null;
    }

    /** @return a stream over the range's bytes {@code [from, to)} (a block) */
    InputStream stream(long from, long to) {
        return new BlockStream(from, to);
    }

    /** The current piece, once the one holding {@code position} arrived. */
    private ByteBuffer pieceHolding(long position) {
        if (closed) {
            throw new IllegalStateException("the fetch of map output " + read.mapId() + " was freed");
        }
        if (piece == null || position < pieceAt) {
            throw new IllegalStateException("blocks of map output " + read.mapId() + " read out of order");
        }
        while (position >= pieceAt + piece.limit()) {
            source.next(this);
        }
        return piece;
    }

    private final class BlockStream extends InputStream {
        private long position;
        private final long end;

        BlockStream(long from, long to) {
            this.position = from;
            this.end = to;
        }

        @Override
        public int read() {
            if (position >= end) {
                return -1;
            }
            ByteBuffer p = pieceHolding(position);
            return p.get((int) (position++ - pieceAt)) & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (position >= end) {
                return -1;
            }
            ByteBuffer p = pieceHolding(position);
            int n = (int) Math.min(len, Math.min(end, pieceAt + p.limit()) - position);
            p.get((int) (position - pieceAt), b, off, n);
            position += n;
            return n;
        }

        /** Skips without waiting: the pieces in between are waited for by the next read. */
        @Override
        public long skip(long n) {
            long k = Math.max(0, Math.min(n, end - position));
            position += k;
            return k;
        }

        /** @return the bytes readable without waiting for a piece */
        @Override
        public int available() {
            ByteBuffer p = piece;
            if (closed || p == null || position < pieceAt || position >= pieceAt + p.limit()) {
                return 0;
            }
            return (int) (Math.min(end, pieceAt + p.limit()) - position);
        }
    }
}
