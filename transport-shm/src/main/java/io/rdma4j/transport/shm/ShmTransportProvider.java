package io.rdma4j.transport.shm;

import io.rdma4j.transport.shm.ffi.Libc;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.Transport;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Objects;

/**
 * The same-host transport, {@code "shm"}, priority 300: tried before verbs (200) and TCP (100),
 * because for a peer on the same host nothing is faster than copying its memory directly. For a
 * peer it cannot reach (another host, another user, refused by the owner or the kernel) it
 * declines that peer's tokens, once per peer with an INFO log, and the next transport carries
 * them.
 *
 * <p>The constructor does nothing; {@link #availability} probes the kernel once per process.
 */
public final class ShmTransportProvider implements TransportProvider {

    /** The transport's stable name. */
    public static final String NAME = "shm";

    /** Routing priority: before verbs (200) and TCP (100). */
    public static final int PRIORITY = 300;

    /** The unavailability reason when {@link ShmSettings#DISABLE} is true. */
    public static final String DISABLED_REASON = "disabled by rdma.shm.disable=true";

    private final java.nio.file.Path ptraceScopeFile;

    /** Creates the provider; probes nothing. */
    public ShmTransportProvider() {
        this(PtraceScope.FILE);
    }

    /**
     * A provider that reads Yama's scope from {@code ptraceScopeFile} instead of
     * {@link PtraceScope#FILE}: tests run owners as under another scope (the file holds 0 to 3,
     * or is absent for no Yama).
     */
    ShmTransportProvider(java.nio.file.Path ptraceScopeFile) {
        this.ptraceScopeFile = Objects.requireNonNull(ptraceScopeFile, "ptraceScopeFile");
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int priority() {
        return PRIORITY;
    }

    /** {@link ShmSettings#all()}. */
    @Override
    public List<Setting<?>> settings() {
        return ShmSettings.all();
    }

    /**
     * Available when not disabled, this process can read its own memory with
     * {@code process_vm_readv} (no seccomp filter or kernel option forbids it), {@code /proc}
     * gives the process's identity, and Yama's {@code ptrace_scope} is not 3. Never throws.
     */
    @Override
    public Availability availability(Settings settings) {
        if (Objects.requireNonNull(settings, "settings").get(ShmSettings.DISABLE)) {
            return Availability.unavailable(DISABLED_REASON);
        }
        String probe = Libc.probe();
        if (!probe.isEmpty()) {
            return Availability.unavailable(probe);
        }
        try {
            HostIdentity.current();
            if (PtraceScope.read(ptraceScopeFile) == PtraceScope.NO_ATTACH) {
                return Availability.unavailable("Yama ptrace_scope=3 forbids cross-memory attach until reboot");
            }
        } catch (IOException | UncheckedIOException | IllegalArgumentException e) {
            return Availability.unavailable("cannot read this process's identity or ptrace scope: " + e.getMessage());
        }
        return Availability.available();
    }

    /**
     * Opens the transport: creates the access table, decides what same-host peers may attach to
     * ({@link ShmSettings#ALLOW_ANY_PTRACER}), installs the
     * control handler.
     *
     * @throws IllegalStateException if unavailable (the message gives the reason)
     * @throws IOException           if the access table cannot be created
     */
    @Override
    public Transport open(TransportContext context) throws IOException {
        availability(Objects.requireNonNull(context, "context").settings()).requireAvailable(NAME);
        return new ShmTransport(context, HostIdentity.current(), PtraceScope.read(ptraceScopeFile));
    }
}
