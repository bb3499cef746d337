package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.LibIbverbs;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;

import java.util.List;
import java.util.Objects;

/**
 * The RDMA verbs transport, {@code "ibverbs"}, priority 200 (tried before TCP's 100).
 *
 * <p>The constructor does nothing: {@code libibverbs.so.1} is first loaded by
 * {@link #availability}, so {@link java.util.ServiceLoader} can instantiate this provider on
 * any host. Thread-safe and stateless; the device probe behind it runs once per process.
 *
 * <p>{@link #open} returns a {@code VerbsTransport}: every device the device target allows, a
 * protection domain and a completion poller per device, RC queue pairs per peer, RDMA WRITE and
 * READ striped over them (see the package documentation).
 */
public final class VerbsTransportProvider implements TransportProvider {

    /** The transport's stable name. */
    public static final String NAME = "ibverbs";

    /** Routing priority: before TCP (100). */
    public static final int PRIORITY = 200;

    /** The unavailability reason when {@link VerbsSettings#DISABLE} ({@code rdma.disableIbverbs}) is true. */
    public static final String DISABLED_REASON = "disabled by rdma.disableIbverbs=true";

    private static final System.Logger LOG = System.getLogger(VerbsTransportProvider.class.getName());

    /** Creates the provider; loads nothing and reads no configuration. */
    public VerbsTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** {@link VerbsSettings#all()}: the switch, device choice, QP handshake, queue and striping settings. */
    @Override
    public List<Setting<?>> settings() {
        return VerbsSettings.all();
    }

    /**
     * Available when {@code libibverbs.so.1} loads and lists at least one RDMA device, and
     * {@link VerbsSettings#DISABLE} is false. Otherwise unavailable with one of these reasons:
     * {@value #DISABLED_REASON}; {@value LibIbverbs#LIBRARY_MISSING}; a text starting with
     * {@value LibIbverbs#NO_DEVICE_PREFIX} (e.g. {@value LibIbverbs#NO_DEVICE}); or
     * "probing libibverbs.so.1 failed: ..." for any other failure.
     *
     * <p>As in the reference, the devices are probed even when the transport is disabled, and
     * a warning is logged when hardware is thereby ignored; the first call loads the library.
     * Never throws for a missing library or device.
     *
     * @param settings the manager's validated settings; must hold {@link VerbsSettings#DISABLE}
     * @throws IllegalArgumentException if {@code settings} lacks {@link VerbsSettings#DISABLE}
     *                                  (a manager bug: every declared setting is present)
     */
    @Override
    public Availability availability(Settings settings) {
        boolean disabled = Objects.requireNonNull(settings, "settings").get(VerbsSettings.DISABLE);
        LibIbverbs.Probe probe = LibIbverbs.probe();
        if (disabled) {
            if (probe instanceof LibIbverbs.Probe.Devices(List<String> names)) {
                LOG.log(System.Logger.Level.WARNING,
                        "RDMA devices {0} are present but ignored: ibverbs is {1}", names, DISABLED_REASON);
            }
            return Availability.unavailable(DISABLED_REASON);
        }
        return switch (probe) {
            case LibIbverbs.Probe.Devices d -> Availability.available();
            case LibIbverbs.Probe.Unavailable(String reason) -> Availability.unavailable(reason);
        };
    }

    /**
     * Opens the verbs transport on the devices {@link VerbsSettings#TARGET} allows: the one it
     * names, those on its NUMA node, or every device with an active port (logged at INFO with the
     * reason).
     *
     * @throws IllegalStateException if ibverbs is unavailable here (the message gives the reason),
     *                               including when disabled, or no device has an active port
     * @throws io.rdma4j.transport.ibverbs.ffi.IbverbsException if opening the device fails natively
     */
    @Override
    public Transport open(TransportContext context) {
        availability(Objects.requireNonNull(context, "context").settings()).requireAvailable(NAME);
        return VerbsTransport.open(context);
    }
}
