package io.rdma4j.transport.ibverbs.ffi;

import io.rdma4j.unix.Errno;
import io.rdma4j.unix.Downcalls;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The raw binding to {@code libibverbs.so.1}, loaded lazily: nothing native happens until
 * {@link #probe()} is first called, so classes that merely mention this one (the provider, the
 * {@link java.util.ServiceLoader}) work on hosts without the library.
 *
 * <p>The first {@link #probe()} looks the library up in {@link Arena#global()} (it stays loaded
 * for the life of the process), binds the three device-list functions and lists the devices
 * once. The result is cached; every later call returns the same {@link Probe}. Thread-safe
 * (class-initialisation holder idiom).
 *
 * <p>Mirrors {@code <infiniband/verbs.h>} of rdma-core:
 * <pre>
 *   struct ibv_device **ibv_get_device_list(int *num_devices);   // NULL + errno on failure
 *   void ibv_free_device_list(struct ibv_device **list);
 *   const char *ibv_get_device_name(struct ibv_device *device);  // char name[IBV_SYSFS_NAME_MAX]
 * </pre>
 */
@SuppressWarnings("restricted")     // this class is where the restricted FFM calls are meant to live
public final class LibIbverbs {

    /** The shared object looked up, by its SONAME. */
    public static final String LIBRARY_NAME = "libibverbs.so.1";

    /** The unavailability reason when the library cannot be loaded. */
    public static final String LIBRARY_MISSING = LIBRARY_NAME + " not found: install Debian package libibverbs1";

    /**
     * How every "library present, no device" reason starts; the parenthesis then says what
     * {@code ibv_get_device_list} returned.
     */
    public static final String NO_DEVICE_PREFIX = "libibverbs found but no RDMA device (";

    /** The unavailability reason when {@code ibv_get_device_list} lists no device. */
    public static final String NO_DEVICE = NO_DEVICE_PREFIX + "ibv_get_device_list returned 0 devices)";

    /** {@code IBV_SYSFS_NAME_MAX} in {@code verbs.h}: the size of {@code ibv_device.name}. */
    static final long IBV_SYSFS_NAME_MAX = 64;

    private static final System.Logger LOG = System.getLogger(LibIbverbs.class.getName());

    /**
     * Set (once, never cleared) when the first probe starts, before anything native happens.
     * Package-private so tests can check that merely constructing the provider loads nothing.
     */
    static volatile boolean loadAttempted;

    private LibIbverbs() {
    }

    /**
     * The cached result of loading the library and listing its devices. The first call does the
     * work (and may block briefly on the library's own initialisation); later calls only read.
     *
     * <p>Never throws: a missing library, a missing symbol, a failing call or any other
     * {@link Throwable} during probing becomes a {@link Probe.Unavailable} whose reason says what
     * happened.
     *
     * @return the probe result, the same instance on every call
     */
    public static Probe probe() {
        return ProbeHolder.PROBE;
    }

    /** Initialised on first access to {@link #probe()}, by the JVM's class-initialisation lock. */
    private static final class ProbeHolder {
        static final Probe PROBE = runProbe();
    }

    private static Probe runProbe() {
        loadAttempted = true;
        Probe probe;
        try {
            probe = loadAndList();
        } catch (Throwable t) {    // anything at all: a broken install must not crash the manager
            LOG.log(System.Logger.Level.DEBUG, "probing " + LIBRARY_NAME + " failed", t);
            probe = new Probe.Unavailable("probing " + LIBRARY_NAME + " failed: " + t);
        }
        LOG.log(System.Logger.Level.DEBUG, "{0} probe: {1}", LIBRARY_NAME, probe);
        return probe;
    }

    private static Probe loadAndList() throws Throwable {
        SymbolLookup library;
        try {
            library = SymbolLookup.libraryLookup(LIBRARY_NAME, Arena.global());
        } catch (IllegalArgumentException e) {      // dlopen failed: not installed
            LOG.log(System.Logger.Level.DEBUG, "cannot load " + LIBRARY_NAME, e);
            return new Probe.Unavailable(LIBRARY_MISSING);
        }
        return listDevices(DeviceListFunctions.bind(library));
    }

    private static Probe listDevices(DeviceListFunctions f) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment count = arena.allocate(JAVA_INT);
            MemorySegment callState = arena.allocate(Downcalls.CAPTURE_STATE);
            MemorySegment list = (MemorySegment) f.getDeviceList().invokeExact(callState, count);
            if (list.address() == 0) {
                int errno = Downcalls.errno(callState);
                return new Probe.Unavailable(NO_DEVICE_PREFIX + "ibv_get_device_list failed: errno " + errno
                        + describeErrno(errno) + ")");
            }
            try {   // the list is freed exactly once, here, whatever happens while reading it
                int n = count.get(JAVA_INT, 0);
                if (n <= 0) {
                    return new Probe.Unavailable(NO_DEVICE);
                }
                MemorySegment devices = list.reinterpret(ADDRESS.byteSize() * n);
                List<String> names = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    MemorySegment device = devices.getAtIndex(ADDRESS, i);
                    MemorySegment name = (MemorySegment) f.getDeviceName().invokeExact(device);
                    // ibv_device.name is char[IBV_SYSFS_NAME_MAX], NUL-terminated; read it before the free.
                    names.add(name.reinterpret(IBV_SYSFS_NAME_MAX).getString(0));
                }
                return new Probe.Devices(names);
            } finally {
                f.freeDeviceList().invokeExact(list);
            }
        }
    }

    /** {@code " (Function not implemented)"}: libc's text for the errno. */
    private static String describeErrno(int errno) {
        return " (" + Errno.text(errno) + ")";
    }

    /**
     * The three device-list functions, bound to one library lookup.
     *
     * @param getDeviceList  {@code ibv_get_device_list}, with {@code errno} captured: (state, int*) -> list
     * @param freeDeviceList {@code ibv_free_device_list}: (list) -> void
     * @param getDeviceName  {@code ibv_get_device_name}: (device) -> const char*
     */
    private record DeviceListFunctions(MethodHandle getDeviceList, MethodHandle freeDeviceList,
                                       MethodHandle getDeviceName) {

        static DeviceListFunctions bind(SymbolLookup library) {
            return new DeviceListFunctions(
                    // returns NULL and sets errno (e.g. ENOSYS without kernel RDMA support)
                    Downcalls.bind(library, LIBRARY_NAME, "ibv_get_device_list",
                            FunctionDescriptor.of(ADDRESS, ADDRESS), Downcalls.CAPTURE_ERRNO),
                    Downcalls.bind(library, LIBRARY_NAME, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS)),
                    Downcalls.bind(library, LIBRARY_NAME, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS)));
        }
    }

    /**
     * What probing found: either the names of the RDMA devices, or why there are none.
     * Immutable.
     */
    public sealed interface Probe permits Probe.Devices, Probe.Unavailable {

        /**
         * Whether at least one device was listed.
         *
         * @return true for {@link Devices}
         */
        boolean isAvailable();

        /**
         * At least one RDMA device, in {@code ibv_get_device_list} order.
         *
         * @param names the device names, e.g. {@code mlx5_0}; immutable, non-empty
         */
        record Devices(List<String> names) implements Probe {
            /**
             * Copies the names.
             *
             * @throws IllegalArgumentException if {@code names} is empty
             * @throws NullPointerException     if {@code names} or a name is null
             */
            public Devices {
                names = List.copyOf(names);
                if (names.isEmpty()) {
                    throw new IllegalArgumentException("a device probe needs at least one device");
                }
            }

            @Override
            public boolean isAvailable() {
                return true;
            }
        }

        /**
         * No device can be used.
         *
         * @param reason why, in words a person can act on; not blank
         */
        record Unavailable(String reason) implements Probe {
            /**
             * Validates the reason.
             *
             * @throws IllegalArgumentException if {@code reason} is blank
             * @throws NullPointerException     if {@code reason} is null
             */
            public Unavailable {
                if (Objects.requireNonNull(reason, "reason").isBlank()) {
                    throw new IllegalArgumentException("an unavailable probe must say why");
                }
            }

            @Override
            public boolean isAvailable() {
                return false;
            }
        }
    }
}
