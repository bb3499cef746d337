package io.rdma4j;

import io.rdma4j.testing.Managers;
import io.rdma4j.testing.StubProvider;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A flight recording shows a transfer's timeline: actions, registrations, control requests. */
class JfrEventsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    @RegisterExtension
    final Managers managers = new Managers();
    private final Arena arena = managers.arena();

    @Test
    void recording_holdsActionRegistrationAndControlRequestEvents(@TempDir Path dir) throws Exception {
        RdmaManager owner = managers.start(new StubProvider("stub", 1));
        RdmaManager holder = managers.start(new StubProvider("stub", 1));
        Path file = dir.resolve("rdma.jfr");
        try (Recording recording = new Recording()) {
            for (String name : List.of("io.rdma4j.Action", "io.rdma4j.Registration", "io.rdma4j.ControlRequest")) {
                recording.enable(name).withThreshold(Duration.ZERO);
            }
            recording.start();
            RdmaRemoteBuffer remote = owner.register(arena.allocate(4096)).join();
            holder.newAction().readInto(remote, arena.allocate(4096)).writeFrom(remote, arena.allocate(100))
                    .submit(TIMEOUT).join();
            holder.release(remote).join(); // asks the owner over its control endpoint
            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> events = RecordingFile.readAllEvents(file);
        List<RecordedEvent> actions = named(events, "io.rdma4j.Action");
        assertEquals(1, actions.size(), events.toString());
        assertEquals(Map.of("transport", "stub", "ops", 2, "reads", 1, "bytes", 4196L, "outcome", "ok"),
                fields(actions.getFirst(), "transport", "ops", "reads", "bytes", "outcome"));
        assertFalse(actions.getFirst().getDuration().isNegative());

        List<RecordedEvent> registrations = named(events, "io.rdma4j.Registration");
        assertEquals(List.of(Map.of("kind", "register", "size", 4096L, "outcome", "ok"),
                        Map.of("kind", "release", "size", 4096L, "outcome", "ok")),
                registrations.stream().map(e -> fields(e, "kind", "size", "outcome")).toList());

        List<RecordedEvent> control = named(events, "io.rdma4j.ControlRequest");
        assertTrue(control.stream().anyMatch(e -> fields(e, "request", "outcome").equals(
                Map.of("request", "release", "outcome", "ok"))), control.toString());
    }

    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }

    private static Map<String, Object> fields(RecordedEvent e, String... names) {
        java.util.Map<String, Object> out = new java.util.HashMap<>();
        for (String n : names) {
            out.put(n, e.getValue(n));
        }
        return out;
    }
}
