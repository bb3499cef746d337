package io.rdma4j.transport.ibverbs;

import io.rdma4j.RdmaBuffer;
import io.rdma4j.RdmaManager;
import io.rdma4j.RdmaManagerBuilder;
import io.rdma4j.RdmaResult;
import io.rdma4j.testing.DataPattern;
import io.rdma4j.testing.Managers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which device carries the traffic, through the transport, on the VM's two soft-RoCE devices
 * (rxe0 and rxe1), told by the devices' own packet counters ({@code
 * /sys/class/infiniband/<dev>/ports/1/hw_counters/sent_pkts} and {@code rcvd_pkts}), not by the
 * transport's books. Managers of this JVM, over every transport on the class path (ibverbs, tcp).
 */
@Tag("softroce")
class VerbsDeviceChoiceVmTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long SIZE = 4L << 20;
    private static final List<String> DEVICES = List.of("rxe0", "rxe1");

    @RegisterExtension
    final Managers managers = new Managers();

    private RdmaManager manager(Map<String, String> settings) {
        RdmaManagerBuilder b = RdmaManager.newBuilder().isolated();
        settings.forEach(b::set);
        return managers.track(b.build());
    }

    /** Packets each device sent and received so far, e.g. {rxe0=1234, rxe1=0}. */
    private static Map<String, Long> packets() throws IOException {
        Map<String, Long> p = new TreeMap<>();
        for (String d : DEVICES) {
            Path counters = Path.of("/sys/class/infiniband", d, "ports", "1", "hw_counters");
            p.put(d, Long.parseLong(Files.readString(counters.resolve("sent_pkts")).trim())
                    + Long.parseLong(Files.readString(counters.resolve("rcvd_pkts")).trim()));
        }
        return p;
    }

    private static Map<String, Long> moved(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> d = new TreeMap<>();
        before.forEach((k, v) -> d.put(k, after.get(k) - v));
        return d;
    }

    /** A write then a read of 4 MiB from {@code holder} to {@code buffer}, both checked; the transports that carried them. */
    private List<String> writeThenRead(RdmaManager holder, RdmaBuffer buffer) {
        MemorySegment out = DataPattern.fill(managers.arena().allocate(SIZE, 64), 31);
        MemorySegment back = managers.arena().allocate(SIZE, 64);
        RdmaResult w = holder.newAction().writeFrom(buffer.remote(), out).submitAndWait(TIMEOUT);
        RdmaResult r = holder.newAction().readInto(buffer.remote(), back).submitAndWait(TIMEOUT);
        assertEquals(-1, DataPattern.mismatch(buffer.segment(), 31), "the owner's buffer");
        assertEquals(-1, DataPattern.mismatch(back, 31), "the bytes read back");
        assertEquals(w.transports(), r.transports());
        return r.transports();
    }

    /**
     * A holder whose device target names one device ({@code rdma.ibverbs.target=nic:<device>})
     * reaches an owner on both devices over that one, paired with the owner's device of the same
     * name: that device's counters move (by at least a packet per 4 KiB each way), the other's
     * not at all. Mutants killed: a target that is ignored (both devices opened, the transfer
     * striped over both), and a route that pairs the holder's device with the owner's first
     * device instead of the same-named one (for rxe1: traffic crosses the veth pair, rxe0 moves).
     */
    @ParameterizedTest(name = "nic:{0}")
    @ValueSource(strings = {"rxe0", "rxe1"})
    void deviceTarget_trafficGoesOverTheNamedDeviceAndTheOwnersSameNamedOne_theOtherDeviceCarriesNothing(String device)
            throws Exception {
        String other = DEVICES.get(1 - DEVICES.indexOf(device));
        RdmaManager owner = manager(Map.of());
        RdmaManager holder = manager(Map.of(VerbsSettings.TARGET.key(), "nic:" + device));
        RdmaBuffer buffer = owner.allocate(SIZE).join();
        Map<String, Long> before = packets();

        List<String> transports = writeThenRead(holder, buffer);

        Map<String, Long> moved = moved(before, packets());
        assertAll(
                () -> assertEquals(List.of(VerbsTransportProvider.NAME), transports),
                () -> assertTrue(moved.get(device) >= 2 * SIZE / 4096, device + " carried the traffic: " + moved),
                () -> assertEquals(0, moved.get(other), other + " carried none of it: " + moved));
    }

    /**
     * {@code rdma.ibverbs.peerAffinity} decides whether the holder's rxe0 may pair with the
     * owner's rxe1 (the owner has no other device): where it may, ibverbs carries the ops over
     * both devices (the veth pair between them); where it may not, the token goes to the next
     * transport (tcp) and neither device moves. Mutant killed: a policy that does not steer routes
     * (every pair allowed).
     */
    @ParameterizedTest(name = "peerAffinity={0} -> {1}")
    @CsvSource({"any, ibverbs", "match_name, tcp", "'groups:rxe0,rxe1', ibverbs", "'groups:rxe0|rxe1', tcp"})
    void peerAffinity_decidesWhetherDifferentlyNamedDevicesPair_elseTheNextTransportCarries(String policy, String expected)
            throws Exception {
        RdmaManager owner = manager(Map.of(VerbsSettings.TARGET.key(), "nic:rxe1"));
        RdmaManager holder = manager(Map.of(VerbsSettings.TARGET.key(), "nic:rxe0",
                VerbsSettings.PEER_AFFINITY.key(), policy));
        RdmaBuffer buffer = owner.allocate(SIZE).join();
        Map<String, Long> before = packets();

        List<String> transports = writeThenRead(holder, buffer);

        Map<String, Long> moved = moved(before, packets());
        boolean verbs = expected.equals(VerbsTransportProvider.NAME);
        assertAll(
                () -> assertEquals(List.of(expected), transports),
                () -> assertTrue(verbs ? moved.get("rxe0") >= 2 * SIZE / 4096 && moved.get("rxe1") >= 2 * SIZE / 4096
                        : moved.get("rxe0") == 0 && moved.get("rxe1") == 0, "packets by device: " + moved));
    }
}
