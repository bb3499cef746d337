package io.rdma4j.transport.ibverbs.device;

import io.rdma4j.transport.ibverbs.ffi.Ibv;
import io.rdma4j.transport.ibverbs.ffi.WorkCompletions;
import io.rdma4j.transport.ibverbs.posting.Chunk;

import java.util.Arrays;

/**
 * The chunks that completions taken off a device's queue stand for ({@link VerbsDevice#pollOnce}),
 * delivered in order by whichever frame of the taking thread gets to each first ({@link
 * Deliveries}): a run of successful chunks of one submission on one connection at once, any other
 * chunk alone.
 *
 * <p>Not thread-safe: filled under the device's poll lock, then delivered by the thread that took it.
 */
final class CompletionBatch {

    /** The vendor error of a chunk whose status is inferred from a later completion ({@link VerbsDevice}'s resolve). */
    static final long INFERRED = 1L << 32;

    private Chunk[] chunks;
    /** Per chunk its status (bits 33 on), whether it is inferred ({@link #INFERRED}, bit 32) and its vendor error (low half). */
    private long[] results;
    private int size;
    /** Index of the next chunk to deliver. */
    private int next;

    CompletionBatch(int capacity) {
        chunks = new Chunk[capacity];
        results = new long[capacity];
    }

    void add(Chunk c, int status, long vendorError) {
        if (size == chunks.length) {
            chunks = Arrays.copyOf(chunks, 2 * size);
            results = Arrays.copyOf(results, 2 * size);
        }
        chunks[size] = c;
        results[size++] = vendorError == INFERRED ? (long) status << 33 | 1L << 32
                : (long) status << 33 | Integer.toUnsignedLong((int) vendorError);
    }

    /** Delivers the chunks not yet delivered; returns how many. */
    int deliverRest() {
        int n = 0;
        while (next < size) {
            int i = next;
            Chunk c = chunks[i];
            int status = (int) (results[i] >>> 33);
            if (status == Ibv.IBV_WC_SUCCESS) {
                int end = i + 1;
                while (end < size && results[end] >>> 33 == Ibv.IBV_WC_SUCCESS && c.sameRunAs(chunks[end])) {
                    end++;
                }
                next = end;      // before the delivery, which may deliver the rest itself (nested)
                n += end - i;
                Chunk.succeeded(chunks, i, end);
                continue;
            }
            next = i + 1;
            n++;
            boolean inferred = (results[i] & 1L << 32) != 0;
            c.completed(status, inferred ? WorkCompletions.statusText(status) + " (status " + status
                    + ", inferred: no completion of its own came before the flush of a later work request on its queue pair;"
                    + " it may have been done before the queue pair left service)"
                    : WorkCompletions.statusText(status) + " (status " + status + ", vendor error 0x"
                    + Integer.toHexString((int) results[i]) + ")");
        }
        return n;
    }
}
