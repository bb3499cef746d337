package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Deadline;
import io.rdma4j.spi.LocalMemory;
import io.rdma4j.spi.RemoteBufferRef;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportException;
import io.rdma4j.spi.TransportOp;
import io.rdma4j.spi.TransportProvider;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.KeepsOpened;
import io.rdma4j.testing.Managers;
import io.rdma4j.testing.TokenRefs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A read-only registration's memory regions, in the soft-RoCE VM: the device itself refuses a
 * peer's RDMA WRITE into them. The holder's transport is driven directly, with its per-token check
 * of the owner's answer taken as passed (as a holder that skipped it, or another RDMA program with
 * the rkey, would post), so that the write reaches the owner's device; the transport contract
 * covers the refusal an rdma4j holder gets before posting.
 */
@Tag("softroce")
class VerbsReadOnlyVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(String device, TransportProvider provider) {
        return managers.track(RdmaManager.newBuilder().isolated().providers(List.of(provider))
                .set(VerbsSettings.TARGET.key(), "nic:" + device).build());
    }

    @Test
    void aWritePostedToAReadOnlyRegistration_isRefusedByTheOwnersDevice_andLeavesItsBytesAsTheyWere() throws Exception {
        RdmaManager owner = manager("rxe1", new VerbsTransportProvider());
        KeepsOpened<Transport> holderSide = new KeepsOpened<>(new VerbsTransportProvider(), Transport.class);
        manager("rxe0", holderSide);
        Transport holder = holderSide.opened().join();
        MemorySegment mine = DataPattern.fill(managers.arena().allocate(8192, 4096), 31);
        RdmaRemoteBuffer token = owner.register(mine.asReadOnly()).join();
        RemoteBufferRef ref = TokenRefs.refFor(token, VerbsTransportProvider.NAME);
        VerbsTransport.Remote decoded = (VerbsTransport.Remote) holder.decodeContext(ref);
        decoded.region().checked = CompletableFuture.completedFuture(null);       // the owner's check taken as passed
        decoded.region().writesChecked = CompletableFuture.completedFuture(null);
        MemorySegment local = managers.arena().allocate(8192, 4096).fill((byte) 0x7f);
        LocalMemory prepared = holder.prepareLocal(local);
        try {
            CompletableFuture<Void> write = holder.submit(List.of(new TransportOp(TransportOp.OpType.WRITE_FROM_LOCAL,
                    local, prepared, ref, decoded, 0)), Deadline.after(TIMEOUT));

            ExecutionException e = assertThrows(ExecutionException.class, () -> write.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS));

            TransportException refused = assertInstanceOf(TransportException.class, e.getCause());
            assertEquals(TransportException.Kind.REMOTE_ACCESS, refused.kind(), refused.getMessage());
            assertTrue(refused.getMessage().contains("refused it"), refused.getMessage());
            assertEquals(-1, DataPattern.mismatch(mine, 31), "the device wrote nothing into the read-only registration");
        } finally {
            if (prepared != null) {
                prepared.close();
            }
        }
    }
}
