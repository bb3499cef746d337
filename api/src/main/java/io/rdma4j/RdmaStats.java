package io.rdma4j;

import io.rdma4j.spi.TransportOp.OpType;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A snapshot of a manager's counters since it started ({@link RdmaManager#stats()}). Counters
 * are read one by one while transfers go on, so two of them may disagree by the ops in flight.
 *
 * @param ops                  per transport and op type, in transport priority order; only pairs that
 *                             saw at least one op
 * @param registrations        buffers registered (each {@code register} or {@code allocate} that succeeded)
 * @param registrationFailures registrations that failed
 * @param releases             buffers released
 * @param registeredBuffers    buffers registered and not yet released, now
 * @param ringPending          register and release requests queued on the registration ring, now
 * @param ringCapacity         how many requests the ring holds ({@code rdma.registrationRingSize})
 */
public record RdmaStats(List<OpStats> ops, long registrations, long registrationFailures, long releases,
                        int registeredBuffers, int ringPending, int ringCapacity) {

    /**
     * Copies the list.
     *
     * @throws NullPointerException if {@code ops} is {@code null}
     */
    public RdmaStats {
        ops = List.copyOf(ops);
    }

    /**
     * The counters of one op type on one transport. An action's ops for one transport run as one
     * group; latency is measured per group, from submit to completion.
     *
     * @param transport   the transport's name
     * @param type        reads or writes
     * @param ops         ops submitted to the transport
     * @param bytes       bytes those ops moved (or tried to)
     * @param errors      ops whose group failed
     * @param groups      groups that carried ops of this type (the latency samples)
     * @param meanLatency the mean time a group took, or zero when there was none
     * @param maxLatency  the longest time a group took, or zero when there was none
     */
    public record OpStats(String transport, OpType type, long ops, long bytes, long errors, long groups,
                          Duration meanLatency, Duration maxLatency) {

        /**
         * Checks the fields.
         *
         * @throws NullPointerException if a field is {@code null}
         */
        public OpStats {
            Objects.requireNonNull(transport, "transport");
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(meanLatency, "meanLatency");
            Objects.requireNonNull(maxLatency, "maxLatency");
        }
    }
}
