package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.transport.ibverbs.device.VerbsDevice;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A manager on both soft-RoCE devices of the VM (SOFTROCE_DEVICES) registers each buffer on both
 * and stripes large transfers over both device pairs; one on a single device still reaches it.
 */
@Tag("softroce")
class VerbsMultiDeviceVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final long MIB = 1L << 20;

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(OpenedVerbs verbs, Map<String, String> settings) {
        var b = RdmaManager.newBuilder().isolated().providers(List.of(verbs));
        settings.forEach(b::set);
        return managers.track(b.build());
    }

    private MemorySegment pattern(long size, int seed) {
        return DataPattern.fill(managers.arena().allocate(size, 64), seed);
    }

    private static List<String> names(VerbsTransport t) {
        return t.devices().stream().map(d -> d.name).toList();
    }

    @Test
    void noTarget_usesEveryDevice_andStripesA64MiBTransferOverBothDevicePairs() {
        OpenedVerbs holderVerbs = new OpenedVerbs();
        OpenedVerbs ownerVerbs = new OpenedVerbs();
        RdmaManager owner = manager(ownerVerbs, Map.of());
        RdmaManager holder = manager(holderVerbs, Map.of());
        List<String> expected = Arrays.stream(System.getenv("SOFTROCE_DEVICES").trim().split("\\s+")).sorted().toList();
        RdmaBuffer buffer = owner.allocate(64 * MIB).join();
        MemorySegment source = pattern(64 * MIB, 5);
        MemorySegment back = managers.arena().allocate(64 * MIB, 64);
        VerbsTransport t = holderVerbs.transport();
        long[] before = t.devices().stream().mapToLong(VerbsDevice::completions).toArray();

        holder.write(buffer.remote(), source, TIMEOUT).join();
        holder.read(buffer.remote(), back, TIMEOUT).join();

        assertAll(
                () -> assertEquals(expected, names(t).stream().sorted().toList(), "the holder uses every device"),
                () -> assertEquals(expected, names(ownerVerbs.transport()).stream().sorted().toList(), "so does the owner"),
                () -> assertEquals(-1, source.mismatch(buffer.segment()), "the owner's memory holds what was written"),
                () -> assertEquals(-1, source.mismatch(back), "the read brought back what was written"),
                () -> assertEquals(2, t.liveQueuePairs(), "one queue pair per device pair"),
                () -> assertTrue(t.devices().get(0).completions() > before[0], "stripes went over " + names(t).get(0)),
                () -> assertTrue(t.devices().get(1).completions() > before[1], "stripes went over " + names(t).get(1)));
    }

    @Test
    void singleDeviceHolder_reachesATwoDeviceOwner_overTheMatchingDevice() {
        String only = System.getenv("SOFTROCE_DEVICES").trim().split("\\s+")[1];
        OpenedVerbs holderVerbs = new OpenedVerbs();
        RdmaManager owner = manager(new OpenedVerbs(), Map.of());
        RdmaManager holder = manager(holderVerbs, Map.of(VerbsSettings.TARGET.key(), "nic:" + only));
        RdmaBuffer buffer = owner.allocate(4 * MIB).join();
        MemorySegment source = pattern(4 * MIB, 9);
        MemorySegment back = managers.arena().allocate(4 * MIB, 64);

        holder.write(buffer.remote(), source, TIMEOUT).join();
        holder.read(buffer.remote(), back, TIMEOUT).join();

        assertAll(
                () -> assertEquals(List.of(only), names(holderVerbs.transport())),
                () -> assertEquals(-1, source.mismatch(back)),
                () -> assertEquals(1, holderVerbs.transport().liveQueuePairs()));
    }
}
