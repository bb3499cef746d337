package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An idle manager burns no CPU: after the busy-poll window its device's poller sleeps on the
 * completion channel, without a timeout, and stays asleep while other managers move data; the
 * next op wakes it.
 */
@Tag("softroce")
class VerbsIdlePollerVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs) {
        String device = System.getenv("SOFTROCE_DEVICES").trim().split("\\s+")[0];
        return managers.track(RdmaManager.newBuilder().isolated().providers(List.of(verbs))
                .set(VerbsSettings.TARGET.key(), "nic:" + device).build());
    }

    /**
     * Waits until the poller of {@code d} sleeps. Polls with a deadline: by design the poller goes
     * to sleep only once the busy-poll window (50 us) has passed without a completion.
     */
    private static void awaitParked(VerbsDevice d) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!d.isParked()) {
            assertTrue(System.nanoTime() < deadline, "the poller of " + d + " never went to sleep");
            Thread.sleep(1);
        }
    }

    @Test
    void idleDevice_pollerSleepsOnTheChannel_andStaysAsleepWhileOthersMoveData_untilTheNextOpsEvent() throws Exception {
        OpenedVerbs idleVerbs = new OpenedVerbs();
        RdmaManager owner = manager(new OpenedVerbs());
        RdmaManager idle = manager(idleVerbs);
        RdmaBuffer buffer = owner.allocate(4096).join();
        VerbsDevice d = idleVerbs.transport().devices().getFirst();
        awaitParked(d);         // its queue is armed: the first read's completion raises an event
        long beforeFirst = d.wakeups();
        idle.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();
        awaitWoken(d, beforeFirst);     // that event reached the poller (maybe after the read returned) ...
        awaitParked(d);                 // ... and it sleeps again
        long wakeups = d.wakeups();
        long completions = d.completions();

        RdmaManager busyOwner = manager(new OpenedVerbs());
        RdmaManager busy = manager(new OpenedVerbs());
        RdmaBuffer big = busyOwner.allocate(16L << 20).join();
        for (int i = 0; i < 4; i++) {
            busy.write(big.remote(), managers.arena().allocate(16L << 20), TIMEOUT).join();
        }

        List<String> stack = Arrays.stream(d.pollerStack()).map(e -> e.getClassName() + "." + e.getMethodName()).toList();
        assertAll(
                () -> assertTrue(d.isParked(), "the idle poller still sleeps"),
                () -> assertEquals(wakeups, d.wakeups(), "no wakeup while nothing was posted to this device"),
                () -> assertEquals(completions, d.completions()),
                () -> assertTrue(stack.contains("io.rdma4j.transport.ibverbs.ffi.CompletionChannel.await"), stack.toString()));
        idle.read(buffer.remote(), managers.arena().allocate(4096), TIMEOUT).join();
        assertEquals(completions + 1, d.completions(), "the next op's completion was taken, by the waiting caller or the poller");
        awaitWoken(d, wakeups);
    }

    /**
     * Waits until the poller of {@code d} woke more than {@code before} times. Polls with a
     * deadline: the completion's event reaches the sleeping poller even when the waiting caller
     * took the completion itself, but possibly after the caller returned.
     */
    private static void awaitWoken(VerbsDevice d, long before) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (d.wakeups() <= before) {
            assertTrue(System.nanoTime() < deadline, "the next op's completion event never woke the poller of " + d);
            Thread.sleep(1);
        }
    }
}
