package io.rdma4j;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a completed action did ({@link RdmaAction#submitForResult}, {@link RdmaAction#submitAndWait}).
 *
 * @param transports the transports that carried the ops, in the order the action's ops first used
 *                   them (one, unless the action's tokens led to several); empty for an empty action
 * @param ops        how many ops ran
 * @param bytes      how many bytes they moved
 * @param duration   from submit until the last transport finished
 */
public record RdmaResult(List<String> transports, int ops, long bytes, Duration duration) {

    /** The result of an action with no ops. */
    static final RdmaResult EMPTY = new RdmaResult(List.of(), 0, 0, Duration.ZERO);

    /**
     * Copies the list and checks the fields.
     *
     * @throws NullPointerException     if {@code transports} or {@code duration} is {@code null}
     * @throws IllegalArgumentException if a count or the duration is negative
     */
    public RdmaResult {
        transports = List.copyOf(transports);
        Objects.requireNonNull(duration, "duration");
        if (ops < 0 || bytes < 0 || duration.isNegative()) {
            throw new IllegalArgumentException("negative ops, bytes or duration");
        }
    }
}
