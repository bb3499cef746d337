package io.rdma4j.transport.ibverbs;

import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportContext;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

/**
 * The owner's check of a token, once per token: before the first op on a remote region, its
 * owner is asked over the control channel whether the buffer id, key and range are still
 * granted; the answer (or its failure) is kept in the region, and every later op on it waits for
 * that one answer. Bounded by {@code rdma.qpInitTimeout}.
 */
final class TokenChecks {

    private final TransportContext context;
    private final Duration timeout;

    TokenChecks(TransportContext context, Duration timeout) {
        this.context = context;
        this.timeout = timeout;
    }

    /** The owner's answer for {@code r}: asked on the first call, the same future afterwards; fails with the owner's refusal. */
    CompletableFuture<Void> checked(RemoteBufferRef ref, VerbsWire.RemoteRegion r) {
        CompletableFuture<Void> f = r.checked;
        if (f != null) {
            return f;
        }
        synchronized (r) {
            if (r.checked == null) {
                byte[] request = VerbsWire.check(HexFormat.of().parseHex(ref.incarnation()), ref.bufferId(), ref.accessKey(),
                        0, ref.size());
                r.checked = context.control().request(ref.owner(), request, Deadline.after(timeout, context.clock()))
                        .thenAccept(reply -> {
                            int code = Byte.toUnsignedInt(reply[0]);
                            if (code != 0) {
                                throw ErrorCode.fromWire(code).toException(new String(reply, 1, reply.length - 1,
                                        StandardCharsets.UTF_8));
                            }
                        });
            }
            return r.checked;
        }
    }
}
