package io.rdma4j.transport.ibverbs.posting;

import io.rdma4j.transport.ibverbs.VerbsTuning;
/**
 * How a large op is spread across queue pairs: into at most one stripe per queue pair, each at
 * least the minimum stripe size, every boundary a multiple of {@link VerbsTuning#STRIPE_ALIGNMENT}
 * bytes from the op's start. All stripes but the last have the same size; the last takes the
 * remainder (so it is never the smallest). Each stripe is then split at the port's maximum
 * message size like any op.
 */
public final class Stripes {

    private Stripes() {
    }

    /**
     * How many stripes an op of {@code length} bytes gets over {@code lanes} queue pairs.
     *
     * @param minStripe the smallest stripe, a positive multiple of {@link VerbsTuning#STRIPE_ALIGNMENT}
     * @return 1 for an op under two minimum stripes (or a single lane), else
     *         {@code min(lanes, length / minStripe)}
     */
    public static int count(long length, int lanes, long minStripe) {
        if (lanes <= 1 || length < 2 * minStripe) {
            return 1;
        }
        return (int) Math.min(lanes, length / minStripe);
    }

    /**
     * The size of every stripe but the last: {@code length / count} rounded down to the alignment.
     * At least {@code minStripe} when {@code count} came from {@link #count}.
     */
    static long size(long length, int count) {
        return count == 1 ? length : length / count / VerbsTuning.STRIPE_ALIGNMENT * VerbsTuning.STRIPE_ALIGNMENT;
    }

    /** Where stripe {@code i} of {@code count} starts. */
    public static long start(long length, int count, int i) {
        return i * size(length, count);
    }

    /** Where stripe {@code i} of {@code count} ends (exclusive). */
    public static long end(long length, int count, int i) {
        return i == count - 1 ? length : (i + 1) * size(length, count);
    }
}
