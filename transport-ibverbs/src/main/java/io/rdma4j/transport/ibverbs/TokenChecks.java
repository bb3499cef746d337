package io.rdma4j.transport.ibverbs;

import io.rdma4j.spi.BufferAccessException;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.ErrorCode;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportOp;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

/**
 * The owner's check of a token, once per token: before the first op on a remote region, its
 * owner is asked over the control channel whether the buffer id, key and range are still
 * granted; the answer (or its failure) is kept in the region, and every later op on it waits for
 * that one answer. Bounded by {@code rdma.qpInitTimeout}. The owner's answer also says whether the
 * registration is read-only: writes then fail with {@link ErrorCode#READ_ONLY} before anything is
 * posted (the owner's memory region refuses remote writes anyway: it has no remote write access).
 */
final class TokenChecks {

    private final TransportContext context;
    private final Duration timeout;

    TokenChecks(TransportContext context, Duration timeout) {
        this.context = context;
        this.timeout = timeout;
    }

    /**
     * The owner's answer for {@code op}'s region: asked on the first call for the region, the same
     * futures afterwards; fails with the owner's refusal, and, for a write, also when the owner
     * said the registration is read-only (whatever the holder's token claims): the op is then
     * refused with {@link ErrorCode#READ_ONLY} before anything is posted.
     */
    CompletableFuture<Void> checked(TransportOp op, VerbsWire.RemoteRegion r) {
        CompletableFuture<Void> f = op.type() == TransportOp.OpType.WRITE_FROM_LOCAL ? r.writesChecked : r.checked;
        if (f != null) {
            return f;
        }
        checked(op.remote(), r);
        return op.type() == TransportOp.OpType.WRITE_FROM_LOCAL ? r.writesChecked : r.checked;
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
                CompletableFuture<Boolean> readOnly = context.control().request(ref.owner(), request,
                                Deadline.after(timeout, context.clock()))
                        .thenApply(reply -> {
                            int code = Byte.toUnsignedInt(reply[0]);
                            if (code != 0) {
                                throw ErrorCode.fromWire(code).toException(new String(reply, 1, reply.length - 1,
                                        StandardCharsets.UTF_8));
                            }
                            return VerbsWire.allowsReadOnly(reply);
                        });
                r.writesChecked = readOnly.thenAccept(ro -> {
                    if (ro) {
                        throw ErrorCode.READ_ONLY.toException(BufferAccessException.readOnly(ref.bufferId()).getMessage());
                    }
                });
                r.checked = readOnly.thenAccept(ro -> { });
            }
            return r.checked;
        }
    }
}
