package io.rdma4j;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The manager's JDK Flight Recorder events, so that {@code jfr print} or JDK Mission Control show
 * a transfer's timeline. Each is created, begun and committed only when recording is on
 * ({@link Event#isEnabled()}, {@link Event#shouldCommit()}), so they cost next to nothing otherwise.
 */
final class RdmaEvents {

    private RdmaEvents() {
    }

    /** One action's ops on one transport, from submit to completion. */
    @Name("io.rdma4j.Action")
    @Label("RDMA Action")
    @Category({"rdma4j"})
    @Description("The ops of one submitted action that one transport carried, from submit to completion")
    @StackTrace(false)
    static final class Action extends Event {
        @Label("Transport")
        String transport;
        @Label("Ops")
        int ops;
        @Label("Reads")
        int reads;
        @Label("Bytes")
        @DataAmount
        long bytes;
        @Label("Outcome")
        @Description("ok, or the error")
        String outcome;
    }

    /** A registration or release on the registration thread. */
    @Name("io.rdma4j.Registration")
    @Label("RDMA Registration")
    @Category({"rdma4j"})
    @Description("Registering a buffer with every transport, or releasing one")
    @StackTrace(false)
    static final class Registration extends Event {
        @Label("Kind")
        @Description("register or release")
        String kind;
        @Label("Buffer Id")
        long bufferId;
        @Label("Size")
        @DataAmount
        long size;
        @Label("Outcome")
        @Description("ok, or the error")
        String outcome;
    }

    /** A request answered on the control endpoint. */
    @Name("io.rdma4j.ControlRequest")
    @Label("RDMA Control Request")
    @Category({"rdma4j"})
    @Description("A request a peer made to this manager's control endpoint")
    @StackTrace(false)
    static final class ControlRequest extends Event {
        @Label("Request")
        @Description("release, readiness, or transport:<name>")
        String request;
        @Label("Peer")
        String peer;
        @Label("Outcome")
        @Description("ok, or the error")
        String outcome;
    }

    /** The outcome field of an event: {@code ok}, or the failure's class and message. */
    static String outcome(Throwable failure) {
        return failure == null ? "ok" : failure.getClass().getSimpleName() + ": " + failure.getMessage();
    }
}
