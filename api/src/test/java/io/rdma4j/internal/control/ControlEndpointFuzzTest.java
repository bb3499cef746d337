package io.rdma4j.internal.control;

import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.testing.Fuzz;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The control endpoint, live on a real socket, fed the fuzzer's streams: to each connection it
 * answers well-formed frames until the first malformed one, then closes it; every byte it sends
 * back is a well-formed reply, and it keeps serving everyone else with no connection left open.
 */
class ControlEndpointFuzzTest {

    @Test
    void liveEndpoint_2000FuzzedStreams_repliesOnlyWellFormedFrames_closesEach_andKeepsServing() throws Exception {
        try (WatchdogThread watchdog = new WatchdogThread("test-control-deadlines");
             ControlServer server = ControlServer.start("127.0.0.1", 0, EchoService.INSTANCE, watchdog, Duration.ofSeconds(5))) {
            int port = server.localAddress().getPort();

            Fuzz.Outcome outcome = Fuzz.run("live control endpoint", 20261208L, 2_000, ControlFrameFuzzTest::input,
                    in -> Long.MAX_VALUE, // what the server allocates is on its own threads; metered by ControlFrameFuzzTest
                    in -> {
                        try (Socket s = new Socket("127.0.0.1", port)) {
                            s.setSoTimeout(30_000); // a safety net: the server closes after our end of stream
                            s.getOutputStream().write(in);
                            s.shutdownOutput();
                            InputStream replies = new ByteArrayInputStream(s.getInputStream().readAllBytes());
                            int answered = 0;
                            Frames.Frame reply;
                            while ((reply = Frames.read(replies)) != null) {
                                assertTrue(reply.type() == Frames.OK || reply.type() == Frames.ERROR, "reply type " + reply.type());
                                if (reply.type() == Frames.ERROR) {
                                    Frames.parseError(reply.body());
                                }
                                answered++;
                            }
                            return answered > 0;
                        }
                    });

            assertTrue(outcome.decoded() > 0 && outcome.refused() > 0, outcome.toString());
            long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (server.connectionCount() > 0) { // each connection thread ends after its last reply went out
                if (System.nanoTime() - end > 0) {
                    fail(server.connectionCount() + " connections still open");
                }
                Thread.sleep(10);
            }
            try (Socket s = new Socket("127.0.0.1", port)) {
                s.getOutputStream().write(Frames.encode(Frames.READINESS, new byte[0]));
                assertEquals(Frames.OK, Frames.read(s.getInputStream()).type());
            }
        }
    }
}
