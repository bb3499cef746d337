package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Downcalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_CONTEXT;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_DEVICE_ATTR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.IBV_PORT_ATTR;
import static io.rdma4j.transport.ibverbs.ffi.IbvLayouts.offset;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * An open RDMA device ({@code struct ibv_context}, from {@code ibv_open_device}): the root that
 * owns every other native object of these bindings.
 *
 * <pre>
 *   VerbsContext ── ProtectionDomain ── MemoryRegion, QueuePair
 *               ├── CompletionQueue (optionally on a CompletionChannel)
 *               └── CompletionChannel
 * </pre>
 *
 * <p><b>Ownership.</b> Each object frees its native counterpart exactly once, in an idempotent
 * {@link #close()}. Closing a parent first closes the children still open (protection domains
 * with their queue pairs and regions, then completion queues, then channels), so a context's
 * {@code close()} releases everything it ever created. Creating from a closed parent throws
 * {@link IllegalStateException}.
 *
 * <p><b>Threading.</b> Control-path methods (open, query, create, modify, close) may be called
 * from any thread, but not concurrently with closing the object they use. Data-path methods
 * ({@link QueuePair#postSend}, {@link CompletionQueue#poll}) of one queue pair or completion queue
 * must be called by one thread at a time.
 *
 * <p><b>Errors.</b> A failing verb throws {@link IbverbsException} naming the function and errno.
 */
public final class VerbsContext implements AutoCloseable {

    private static final long OPS = offset(IBV_CONTEXT, "ops");

    private final String deviceName;
    private final MemorySegment context;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final Resources protectionDomains = new Resources();
    private final Resources completionQueues = new Resources();
    private final Resources channels = new Resources();
    private final AtomicBoolean closed = new AtomicBoolean();

    private VerbsContext(String deviceName, MemorySegment context) {
        this.deviceName = deviceName;
        this.context = context;
        // The inline verbs of verbs.h dispatch through context->ops; read the pointers once.
        this.pollCq = opsPointer("poll_cq");
        this.reqNotifyCq = opsPointer("req_notify_cq");
        this.postSend = opsPointer("post_send");
        this.postRecv = opsPointer("post_recv");
    }

    private MemorySegment opsPointer(String name) {
        MemorySegment fn = context.get(ADDRESS, OPS + offset(IbvLayouts.IBV_CONTEXT_OPS, name));
        if (fn.address() == 0) {
            throw new IbverbsException("ibv_open_device", 0,
                    "device " + deviceName + ": the provider left ibv_context_ops." + name + " empty");
        }
        return fn;
    }

    /**
     * The names of the RDMA devices, in {@code ibv_get_device_list} order.
     *
     * @return the names, e.g. {@code [rxe0, rxe1]}; empty when there are none
     * @throws IbverbsException if the library cannot be loaded or {@code ibv_get_device_list} fails
     */
    public static List<String> deviceNames() {
        return withDeviceList(devices -> {
            List<String> names = new ArrayList<>();
            for (MemorySegment d : devices) {
                names.add(name(d));
            }
            return names;
        });
    }

    /**
     * Opens a device by name.
     *
     * @param deviceName as listed by {@link #deviceNames()}
     * @return the open context; the caller owns it and must close it
     * @throws IbverbsException if no device has that name (the message lists those that exist),
     *                          or {@code ibv_open_device} fails
     */
    public static VerbsContext open(String deviceName) {
        Objects.requireNonNull(deviceName, "deviceName");
        return withDeviceList(devices -> {
            List<String> names = new ArrayList<>();
            for (MemorySegment d : devices) {
                String name = name(d);
                if (name.equals(deviceName)) {
                    try (Arena arena = Arena.ofConfined()) {
                        MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
                        MemorySegment ctx = (MemorySegment) IbvFunctions.OPEN_DEVICE.invokeExact(state, d);
                        return new VerbsContext(name, Calls.checkPointer("ibv_open_device", ctx, state, IBV_CONTEXT.byteSize()));
                    }
                }
                names.add(name);
            }
            throw new IbverbsException("ibv_open_device", 0, "no RDMA device named " + deviceName + "; devices: " + names);
        });
    }

    private interface DeviceListUser<T> {
        T use(List<MemorySegment> devices) throws Throwable;
    }

    private static <T> T withDeviceList(DeviceListUser<T> user) {
        IbvFunctions.requireLibrary("ibv_get_device_list");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment list = (MemorySegment) IbvFunctions.GET_DEVICE_LIST.invokeExact(state, count);
            if (list.address() == 0) {
                throw IbverbsException.failed("ibv_get_device_list", Downcalls.errno(state), "");
            }
            try {   // freed exactly once, whatever the user does
                int n = count.get(JAVA_INT, 0);
                MemorySegment array = list.reinterpret(ADDRESS.byteSize() * Math.max(n, 0));
                List<MemorySegment> devices = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    devices.add(array.getAtIndex(ADDRESS, i));
                }
                return user.use(devices);
            } finally {
                IbvFunctions.FREE_DEVICE_LIST.invokeExact(list);
            }
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    private static String name(MemorySegment device) throws Throwable {
        MemorySegment name = (MemorySegment) IbvFunctions.GET_DEVICE_NAME.invokeExact(device);
        return name.reinterpret(LibIbverbs.IBV_SYSFS_NAME_MAX).getString(0);
    }

    /**
     * The device's name.
     *
     * @return e.g. {@code rxe0}
     */
    public String deviceName() {
        return deviceName;
    }

    /**
     * Queries the device's attributes ({@code ibv_query_device}).
     *
     * @return the attributes
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this context is closed
     */
    public DeviceAttributes queryDevice() {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment a = arena.allocate(IBV_DEVICE_ATTR);
            Calls.check("ibv_query_device", (int) IbvFunctions.QUERY_DEVICE.invokeExact(state, context, a), state);
            return new DeviceAttributes(a.asSlice(0, 64).getString(0), a.get(JAVA_LONG, offset(IBV_DEVICE_ATTR, "node_guid")),
                    a.get(JAVA_LONG, offset(IBV_DEVICE_ATTR, "max_mr_size")), i32(a, IBV_DEVICE_ATTR, "vendor_id"),
                    i32(a, IBV_DEVICE_ATTR, "vendor_part_id"), i32(a, IBV_DEVICE_ATTR, "hw_ver"),
                    i32(a, IBV_DEVICE_ATTR, "max_qp"), i32(a, IBV_DEVICE_ATTR, "max_qp_wr"), i32(a, IBV_DEVICE_ATTR, "max_sge"),
                    i32(a, IBV_DEVICE_ATTR, "max_cq"), i32(a, IBV_DEVICE_ATTR, "max_cqe"), i32(a, IBV_DEVICE_ATTR, "max_mr"),
                    i32(a, IBV_DEVICE_ATTR, "max_pd"), i32(a, IBV_DEVICE_ATTR, "max_qp_rd_atom"),
                    i32(a, IBV_DEVICE_ATTR, "max_qp_init_rd_atom"), u8(a, IBV_DEVICE_ATTR, "phys_port_cnt"));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Queries one port ({@code ibv_query_port}).
     *
     * @param portNumber from 1 to {@link DeviceAttributes#physicalPortCount()}
     * @return the port's attributes
     * @throws IbverbsException if the call fails (e.g. errno 22 for a port that does not exist)
     * @throws IllegalStateException if this context is closed
     */
    public PortAttributes queryPort(int portNumber) {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment a = arena.allocate(IBV_PORT_ATTR);     // zeroed, as the header's inline wrapper does
            Calls.check("ibv_query_port", (int) IbvFunctions.QUERY_PORT.invokeExact(state, context, (byte) portNumber, a), state);
            return new PortAttributes(i32(a, IBV_PORT_ATTR, "state"), i32(a, IBV_PORT_ATTR, "max_mtu"),
                    i32(a, IBV_PORT_ATTR, "active_mtu"), i32(a, IBV_PORT_ATTR, "gid_tbl_len"),
                    Integer.toUnsignedLong(i32(a, IBV_PORT_ATTR, "max_msg_sz")),
                    Short.toUnsignedInt(a.get(JAVA_SHORT, offset(IBV_PORT_ATTR, "lid"))), u8(a, IBV_PORT_ATTR, "active_width"),
                    u8(a, IBV_PORT_ATTR, "active_speed"), u8(a, IBV_PORT_ATTR, "phys_state"), u8(a, IBV_PORT_ATTR, "link_layer"));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * Reads one entry of a port's GID table ({@code ibv_query_gid}).
     *
     * @param portNumber from 1
     * @param index      from 0 to {@link PortAttributes#gidTableLength()} - 1
     * @return the entry; {@link Gid#isZero()} for an unused one
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this context is closed
     */
    public Gid queryGid(int portNumber, int index) {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment gid = arena.allocate(IbvLayouts.IBV_GID);
            Calls.check("ibv_query_gid", (int) IbvFunctions.QUERY_GID.invokeExact(state, context, (byte) portNumber, index, gid),
                    state);
            return Gid.of(gid.toArray(JAVA_BYTE));
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    /**
     * The type of a GID table entry as the kernel names it in sysfs
     * ({@code /sys/class/infiniband/<device>/ports/<port>/gid_attrs/types/<index>}).
     *
     * @param portNumber from 1
     * @param index      the GID index
     * @return e.g. "RoCE v2" or "IB/RoCE v1"; empty when sysfs has no such entry (unused, or not Linux)
     */
    public Optional<String> gidType(int portNumber, int index) {
        Path type = Path.of("/sys/class/infiniband", deviceName, "ports", Integer.toString(portNumber), "gid_attrs", "types",
                Integer.toString(index));
        try {
            String text = Files.readString(type).strip();
            return text.isEmpty() ? Optional.empty() : Optional.of(text);
        } catch (IOException e) {       // unused entries read as EINVAL
            return Optional.empty();
        }
    }

    /**
     * Allocates a protection domain ({@code ibv_alloc_pd}), owned by this context.
     *
     * @return the domain; close it, or this context, to free it
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this context is closed
     */
    public ProtectionDomain allocateProtectionDomain() {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        ProtectionDomain pd = ProtectionDomain.allocate(this);
        protectionDomains.add(pd);
        return pd;
    }

    /**
     * Creates a completion channel ({@code ibv_create_comp_channel}), owned by this context: a
     * file descriptor that a thread can wait on for completion events.
     *
     * @return the channel
     * @throws IbverbsException if the call fails
     * @throws IllegalStateException if this context is closed
     */
    public CompletionChannel createCompletionChannel() {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        CompletionChannel channel = CompletionChannel.create(this);
        channels.add(channel);
        return channel;
    }

    /**
     * Creates a completion queue ({@code ibv_create_cq}, completion vector 0), owned by this
     * context.
     *
     * @param minimumEntries at least this many completions fit (the driver may round up)
     * @param channel        the channel that reports its events, or null for a queue that is only polled
     * @return the queue
     * @throws IllegalArgumentException if {@code minimumEntries < 1}, or the channel belongs to another context
     * @throws IbverbsException if the call fails (e.g. more entries than the device's max_cqe)
     * @throws IllegalStateException if this context or the channel is closed
     */
    public CompletionQueue createCompletionQueue(int minimumEntries, CompletionChannel channel) {
        Calls.checkOpen(closed.get(), "context " + deviceName);
        if (minimumEntries < 1) {
            throw new IllegalArgumentException("a completion queue needs at least one entry, got " + minimumEntries);
        }
        if (channel != null && channel.context() != this) {
            throw new IllegalArgumentException("the completion channel belongs to another device context");
        }
        CompletionQueue cq = CompletionQueue.create(this, minimumEntries, channel);
        completionQueues.add(cq);
        return cq;
    }

    /** The completion queue whose native address is {@code address}, if it is open. */
    Optional<CompletionQueue> completionQueueAt(long address) {
        for (AutoCloseable c : completionQueues.snapshot()) {
            if (c instanceof CompletionQueue cq && cq.address() == address) {
                return Optional.of(cq);
            }
        }
        return Optional.empty();
    }

    MemorySegment pointer() {
        return context;
    }

    MemorySegment pollCqFunction() {
        return pollCq;
    }

    MemorySegment reqNotifyCqFunction() {
        return reqNotifyCq;
    }

    MemorySegment postSendFunction() {
        return postSend;
    }

    MemorySegment postRecvFunction() {
        return postRecv;
    }

    void checkOpen() {
        Calls.checkOpen(closed.get(), "context " + deviceName);
    }

    void removed(ProtectionDomain pd) {
        protectionDomains.remove(pd);
    }

    void removed(CompletionQueue cq) {
        completionQueues.remove(cq);
    }

    void removed(CompletionChannel channel) {
        channels.remove(channel);
    }

    /**
     * Closes every protection domain (with its queue pairs and memory regions), completion queue
     * and channel still open, then the device ({@code ibv_close_device}). Idempotent.
     *
     * @throws IbverbsException if a child or the device fails to close; every child is still
     *                          tried, and the device stays open only if a child did not close
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        RuntimeException failure = null;
        for (Resources children : List.of(protectionDomains, completionQueues, channels)) {
            try {
                children.closeAll();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            closed.set(false);        // something is still open: keep the device so a retry can free it
            throw failure;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(Downcalls.CAPTURE_STATE);
            Calls.check("ibv_close_device", (int) IbvFunctions.CLOSE_DEVICE.invokeExact(state, context), state);
        } catch (Throwable t) {
            throw Downcalls.rethrow(t);
        }
    }

    @Override
    public String toString() {
        return "VerbsContext[" + deviceName + (closed.get() ? ", closed]" : "]");
    }

    private static int i32(MemorySegment s, java.lang.foreign.MemoryLayout layout, String field) {
        return s.get(JAVA_INT, offset(layout, field));
    }

    private static int u8(MemorySegment s, java.lang.foreign.MemoryLayout layout, String field) {
        return Byte.toUnsignedInt(s.get(JAVA_BYTE, offset(layout, field)));
    }
}
