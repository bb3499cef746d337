package io.rdma4j.internal.control;

import io.rdma4j.PeerReadiness;
import io.rdma4j.internal.WatchdogThread;
import io.rdma4j.spi.Endpoint;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The control endpoint bounds each request it started receiving, whatever the client does. */
class ControlServerDeadlineTest {

    private static final Duration FRAME_TIMEOUT = Duration.ofMillis(500);

    @Test
    void requestTrickledOneByteAtATime_connectionClosedAfterTheFrameTimeout_andOthersAreServed() throws Exception {
        try (WatchdogThread watchdog = new WatchdogThread("test-control-deadlines");
             ControlServer server = ControlServer.start("127.0.0.1", 0, EchoService.INSTANCE, watchdog, FRAME_TIMEOUT);
             Socket slow = new Socket("127.0.0.1", server.localAddress().getPort())) {
            // A release frame of 45 bytes sent one byte every 300 ms would take 13 s; the server stops it first.
            byte[] frame = Frames.encode(Frames.RELEASE, new byte[Frames.RELEASE_BYTES]);
            CompletableFuture<Integer> sent = CompletableFuture.supplyAsync(() -> trickle(slow, frame));

            int bytesSent = sent.get(10, TimeUnit.SECONDS);

            assertTrue(bytesSent < frame.length, "the server closed the connection after " + bytesSent + " bytes");
            assertEquals(PeerReadiness.State.READY, readinessOf(server), "a well-behaved client is still served");
        }
    }

    @Test
    void idleConnectionBetweenRequests_isKeptOpen() throws Exception {
        try (WatchdogThread watchdog = new WatchdogThread("test-control-deadlines");
             ControlServer server = ControlServer.start("127.0.0.1", 0, EchoService.INSTANCE, watchdog, FRAME_TIMEOUT);
             Socket s = new Socket("127.0.0.1", server.localAddress().getPort())) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            out.write(Frames.encode(Frames.READINESS, new byte[0]));
            assertEquals(Frames.OK, Frames.read(in).type());
            Thread.sleep(3 * FRAME_TIMEOUT.toMillis()); // idling is the behaviour under test

            out.write(Frames.encode(Frames.READINESS, new byte[0]));

            assertEquals(Frames.OK, Frames.read(in).type(), "the frame timeout counts from a request's first byte");
        }
    }

    /**
     * Sends {@code frame} one byte every 300 ms; returns how many bytes went out before a write
     * failed because the server had closed the connection (the first write after the close still
     * succeeds locally and draws a reset; the next one fails).
     */
    private static int trickle(Socket s, byte[] frame) {
        try {
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < frame.length; i++) {
                try {
                    out.write(frame[i]);
                    out.flush();
                } catch (SocketException closedByServer) {
                    return i;
                }
                Thread.sleep(300); // the client's behaviour under test
            }
            return frame.length;
        } catch (IOException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PeerReadiness.State readinessOf(ControlServer server) throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.localAddress().getPort())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(Frames.encode(Frames.READINESS, new byte[0]));
            Frames.Frame reply = Frames.read(new DataInputStream(s.getInputStream()));
            return Frames.parseReadiness(new Endpoint("127.0.0.1", 1), reply.body()).state();
        }
    }
}
