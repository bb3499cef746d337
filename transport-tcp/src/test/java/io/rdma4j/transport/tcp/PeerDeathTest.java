package io.rdma4j.transport.tcp;

import io.rdma4j.testing.Signals;
import io.rdma4j.PeerReadiness;
import io.rdma4j.PeerUnreachableException;
import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaException;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaRemoteBuffer;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

import static io.rdma4j.transport.tcp.TcpTesting.MIB;
import static io.rdma4j.transport.tcp.TcpTesting.TRANSFER_TIMEOUT;
import static io.rdma4j.transport.tcp.TcpTesting.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A peer JVM killed with SIGKILL in the middle of an op of this process (the survivor): the op
 * fails by its deadline with an error naming the peer, the survivor keeps serving another peer
 * JVM, and its open file descriptors and platform threads come back to what they were before.
 *
 * <p>To be sure the op is in the middle when the peer dies, the victim is first stopped
 * (SIGSTOP: it keeps its sockets, the kernel still accepts connections for it, nothing reads
 * them), the op is started and seen to hold a connection, then the victim is killed.
 */
class PeerDeathTest {

    private static final long VICTIM_BYTES = 64 * MIB; // more than socket buffers hold: a write cannot finish
    private static final Duration OP_DEADLINE = Duration.ofSeconds(30);

    /** What the survivor does to the victim's buffer; returns the op's future. */
    private interface Op extends Function<RdmaRemoteBuffer, CompletableFuture<Void>> {
    }

    @Test
    void peerKilledDuringAWrite_writeFailsNamingIt_survivorServesOthers_andLeaksNothing() throws Exception {
        survive((manager, arena) -> victim -> manager.write(victim, arena.allocate(VICTIM_BYTES, 8), OP_DEADLINE),
                victim -> "tcp write of buffer " + victim.id() + " to " + TestTokens.dataEndpoint(victim));
    }

    @Test
    void peerKilledDuringARead_readFailsNamingIt_survivorServesOthers_andLeaksNothing() throws Exception {
        survive((manager, arena) -> victim -> manager.read(victim, arena.allocate(VICTIM_BYTES, 8), OP_DEADLINE),
                victim -> "tcp read of buffer " + victim.id() + " from " + TestTokens.dataEndpoint(victim));
    }

    @Test
    void peerKilledDuringAControlExchange_releaseFailsNamingIt_survivorServesOthers_andLeaksNothing() throws Exception {
        survive((manager, arena) -> victim -> manager.release(victim, OP_DEADLINE),
                victim -> "release of buffer " + victim.id() + " to " + victim.owner());
    }

    private interface Scenario {
        Op op(RdmaManager survivor, Arena arena);
    }

    private static void survive(Scenario scenario, Function<RdmaRemoteBuffer, String> expectedMessageStart) throws Exception {
        Assumptions.assumeTrue(ProcessStats.available(), "needs /proc/self/fd");
        try (RdmaManager survivor = TcpTesting.manager();
             RdmaBuffer own = survivor.allocate(64 * 1024).join();
             Arena arena = Arena.ofShared();
             PeerProcess bystander = PeerProcess.start(List.of(), "size=65536");
             PeerProcess victim = PeerProcess.start(List.of(), "size=" + VICTIM_BYTES)) {
            Op op = scenario.op(survivor, arena);
            exchangeWith(survivor, own, bystander, arena, 1); // every path the op takes, with a healthy peer
            Signals.stop(victim.pid());
            ProcessStats before = ProcessStats.now();

            CompletableFuture<Void> running = op.apply(victim.token());
            awaitStats("the op holds a connection to the stopped victim", s -> s.openFds() > before.openFds());
            victim.process().destroyForcibly();
            victim.process().waitFor();
            long killed = System.nanoTime();
            Throwable failure = failureByTheDeadline(running);
            long failed = System.nanoTime();

            RdmaException e = assertInstanceOf(RdmaException.class, failure, failure.toString());
            PeerUnreachableException unreachable = assertInstanceOf(PeerUnreachableException.class,
                    e instanceof PeerUnreachableException ? e : e.getCause(), e.toString());
            assertTrue(unreachable.getMessage().startsWith(expectedMessageStart.apply(victim.token())), unreachable.getMessage());
            ProcessStats after = awaitStats("open fds and threads back to " + before, s -> s.notAbove(before));
            System.out.printf("op failed %d ms after the kill; before %s, after %s, %d ms after the failure%n",
                    (failed - killed) / 1_000_000, before, after, (System.nanoTime() - failed) / 1_000_000);
            exchangeWith(survivor, own, bystander, arena, 2); // the survivor still serves, and is served by, others
        }
    }

    /** The bystander writes and reads the survivor's buffer, and the survivor reads the bystander's and probes it. */
    private static void exchangeWith(RdmaManager survivor, RdmaBuffer own, PeerProcess bystander, Arena arena, long seed)
            throws Exception {
        String token = HexFormat.of().formatHex(own.remote().toBytes());
        assertEquals("OK", bystander.command("write " + token + " " + seed));
        MemorySegment expected = arena.allocate(own.segment().byteSize(), 8);
        Patterns.fill(expected, seed);
        assertEquals(-1, Patterns.mismatch(expected, own.segment(), expected.byteSize()), "the bystander's write landed");
        assertEquals("CRC " + Long.toHexString(Patterns.crc(expected)), bystander.command("readcrc " + token));
        MemorySegment local = arena.allocate(bystander.token().size(), 8);
        await(survivor.read(bystander.token(), local, TRANSFER_TIMEOUT));
        await(survivor.write(bystander.token(), local, TRANSFER_TIMEOUT));
        Endpoint peer = bystander.token().owner();
        assertEquals(PeerReadiness.State.READY,
                survivor.probeReadiness(List.of(peer), TRANSFER_TIMEOUT).join().get(peer).state());
    }

    private static Throwable failureByTheDeadline(CompletableFuture<Void> running) throws InterruptedException {
        try {
            running.get(OP_DEADLINE.toSeconds() + 5, TimeUnit.SECONDS);
            return fail("the op succeeded against a killed peer");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            return fail("the op did not end by its " + OP_DEADLINE + " deadline");
        }
    }

    /** Polls this process's counts, with a deadline: the kernel and the pools settle on their own time. */
    private static ProcessStats awaitStats(String what, java.util.function.Predicate<ProcessStats> condition)
            throws InterruptedException {
        long end = System.nanoTime() + TcpTesting.SAFETY.toNanos();
        ProcessStats now;
        while (!condition.test(now = ProcessStats.now())) {
            if (System.nanoTime() - end > 0) {
                fail("gave up waiting for: " + what + "; now " + now);
            }
            Thread.sleep(10);
        }
        return now;
    }

}
