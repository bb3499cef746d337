package io.rdma4j.transport.ibverbs.posting;

import java.util.ArrayList;
import java.util.List;

/**
 * The small ops of one {@link VerbsSubmission} gathered per connection while the submitting thread
 * starts them ({@link VerbsSubmission#gather}), so that an action's ops to one queue pair go as
 * one chain of work requests ({@link VerbsSubmission#postGathered}).
 *
 * <p>Not thread-safe: the submitting thread's only.
 */
final class Gathered {

    private final List<VerbsConnection> on = new ArrayList<>(2);
    /** The submission's op count: room for the chunks of one connection, so that its list never grows. */
    private final int expected;
    /** Per connection of {@link #on}, at the same index, its chunks in the order gathered. */
    private final List<List<Chunk>> chunks = new ArrayList<>(2);

    /** The connection of the chunk added last, and its chunks: the next one mostly goes there too. */
    private VerbsConnection last;
    private List<Chunk> lastChunks;

    /** @param expected the chunks expected at most (the submission's op count) */
    Gathered(int expected) {
        this.expected = expected;
    }

    /** Adds {@code chunk}, of one op on {@code c}, to those gathered for {@code c}. */
    void add(VerbsConnection c, Chunk chunk) {
        if (c != last) {
            int i = indexOf(c);
            if (i < 0) {
                i = on.size();
                on.add(c);
                chunks.add(new ArrayList<>(on.size() == 1 ? expected : 4));
            }
            last = c;
            lastChunks = chunks.get(i);
        }
        lastChunks.add(chunk);
    }

    /** Where {@code c} is in {@link #on}, by identity; -1 when it is not. A few connections at most. */
    private int indexOf(VerbsConnection c) {
        for (int i = 0; i < on.size(); i++) {
            if (on.get(i) == c) {
                return i;
            }
        }
        return -1;
    }

    /** Counts ({@link VerbsSubmission#expect}) and queues, per connection, what was gathered, unless {@code s} was aborted meanwhile. */
    void post(VerbsSubmission s) {
        for (int i = 0; i < on.size(); i++) {
            VerbsConnection c = on.get(i);
            List<Chunk> mine = chunks.get(i);
            if (!s.expect(c, mine.size())) {
                return;     // aborted: not posted, nor counted
            }
            if (mine.size() == 1) {
                c.enqueue(mine.getFirst());
            } else {
                c.enqueue(mine);
            }
        }
    }
}
