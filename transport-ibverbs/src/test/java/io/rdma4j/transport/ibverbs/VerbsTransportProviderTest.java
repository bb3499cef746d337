package io.rdma4j.transport.ibverbs;

import io.rdma4j.transport.ibverbs.ffi.LibIbverbs;
import io.rdma4j.spi.Availability;
import io.rdma4j.spi.ControlChannel;
import io.rdma4j.spi.Endpoint;
import io.rdma4j.spi.RegistrationLookup;
import io.rdma4j.spi.Setting;
import io.rdma4j.spi.Settings;
import io.rdma4j.spi.TransportContext;
import io.rdma4j.spi.TransportProvider;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider against the real {@code libibverbs.so.1} of this host, whatever it has: no
 * library, a library without devices, or devices. No mocks.
 */
class VerbsTransportProviderTest {

    private final VerbsTransportProvider provider = new VerbsTransportProvider();

    /** Asserts {@code reason} is one of the documented "nothing to use here" texts. */
    static void assertDocumentedProbeReason(String reason) {
        assertTrue(reason.equals(LibIbverbs.LIBRARY_MISSING)
                        || reason.equals(LibIbverbs.NO_DEVICE)
                        || reason.startsWith(LibIbverbs.NO_DEVICE_PREFIX + "ibv_get_device_list failed: errno "),
                () -> "undocumented reason: " + reason);
    }

    @Nested
    class Identity {

        @Test
        void name_isIbverbs() {
            assertEquals("ibverbs", provider.name());
        }

        @Test
        void priority_isAboveTcp() {
            assertEquals(200, provider.priority());
        }

        @Test
        void settings_declaresEveryIbverbsSetting() {
            assertEquals(VerbsSettings.all(), provider.settings());
        }
    }

    @Nested
    class AvailabilityOnThisHost {

        @Test
        void availability_defaults_availableWithDevicesOrDocumentedReason() {
            Availability availability = provider.availability(FakeSettings.defaults());

            System.out.println("ibverbs on this host: " + availability + "; probe: " + LibIbverbs.probe());
            if (availability.isAvailable()) {
                LibIbverbs.Probe.Devices devices = assertInstanceOf(LibIbverbs.Probe.Devices.class, LibIbverbs.probe());
                assertFalse(devices.names().isEmpty());
            } else {
                assertDocumentedProbeReason(availability.reason());
            }
        }

        @Test
        void availability_disabled_unavailableWithDisabledReason() {
            Availability availability = provider.availability(
                    FakeSettings.defaults().with(VerbsSettings.DISABLE, "true"));

            assertAll(
                    () -> assertFalse(availability.isAvailable()),
                    () -> assertEquals("disabled by rdma.disableIbverbs=true", availability.reason()));
        }

        @Test
        void availability_calledTwice_sameAnswer() {
            Availability first = provider.availability(FakeSettings.defaults());

            Availability second = new VerbsTransportProvider().availability(FakeSettings.defaults());

            assertEquals(first.toString(), second.toString());
        }
    }

    @Nested
    class Open {

        @Test
        void open_disabled_throwsIllegalStateWithReason() {
            TransportContext context = contextWith(FakeSettings.defaults().with(VerbsSettings.DISABLE, "on"));

            IllegalStateException e = assertThrows(IllegalStateException.class, () -> provider.open(context));

            assertTrue(e.getMessage().contains(VerbsTransportProvider.DISABLED_REASON), e.getMessage());
        }

        @Test
        void open_whereNoDeviceIsUsable_throwsIllegalStateWithTheProbeReason() {
            // where devices exist, open() returns the transport: VerbsContractVmTest covers that
            Assumptions.assumeFalse(LibIbverbs.probe().isAvailable(), "RDMA devices present: the soft-RoCE VM tests cover open()");
            TransportContext context = contextWith(FakeSettings.defaults());

            IllegalStateException e = assertThrows(IllegalStateException.class, () -> provider.open(context));

            assertDocumentedProbeReason(e.getMessage().substring("ibverbs is unavailable: ".length()));
        }
    }

    /**
     * The provider and the ffi layer are loaded afresh in an isolated class loader, so what
     * other tests in this JVM already probed does not matter.
     */
    @Nested
    class NoSideEffects {

        @Test
        void constructor_loadsNoNativeLibrary() throws Exception {
            try (URLClassLoader loader = isolatedLoader()) {
                Class<?> type = Class.forName(VerbsTransportProvider.class.getName(), true, loader);

                Object isolated = type.getConstructor().newInstance();

                assertEquals("ibverbs", type.getMethod("name").invoke(isolated));
                assertFalse(loadAttempted(loader), "constructing the provider started the native probe");
            }
        }

        @Test
        void serviceLoader_findsProviderWithoutLoadingLibrary() throws Exception {
            try (URLClassLoader loader = isolatedLoader()) {
                Class<?> spi = Class.forName(TransportProvider.class.getName(), false, loader);

                List<Object> names = new ArrayList<>();
                for (Object p : ServiceLoader.load(spi, loader)) {
                    names.add(p.getClass().getMethod("name").invoke(p));
                }

                assertEquals(List.of("ibverbs"), names);
                assertFalse(loadAttempted(loader), "instantiating the provider started the native probe");
            }
        }

        @Test
        void probe_firstCall_setsTheFlag() throws Exception {
            try (URLClassLoader loader = isolatedLoader()) {
                Class<?> lib = Class.forName(LibIbverbs.class.getName(), true, loader);

                lib.getMethod("probe").invoke(null);

                assertTrue(loadAttempted(loader));
            }
        }

        private static URLClassLoader isolatedLoader() {
            URL ibverbs = VerbsTransportProvider.class.getProtectionDomain().getCodeSource().getLocation();
            URL spi = Setting.class.getProtectionDomain().getCodeSource().getLocation();
            return new URLClassLoader("isolated-ibverbs", new URL[] {ibverbs, spi}, ClassLoader.getPlatformClassLoader());
        }

        /** Reads the package-private {@code LibIbverbs.loadAttempted} of the isolated copy. */
        private static boolean loadAttempted(ClassLoader loader) throws ReflectiveOperationException {
            Class<?> lib = Class.forName(LibIbverbs.class.getName(), false, loader);
            assertTrue(lib.getClassLoader() == loader, "LibIbverbs must come from the isolated loader");
            Field flag = lib.getDeclaredField("loadAttempted");
            flag.setAccessible(true);
            return flag.getBoolean(null);
        }
    }

    private static TransportContext contextWith(Settings settings) {
        return new TransportContext() {
            @Override
            public Settings settings() {
                return settings;
            }

            @Override
            public RegistrationLookup registrations() {
                throw new UnsupportedOperationException();
            }

            @Override
            public ControlChannel control() {
                throw new UnsupportedOperationException();
            }

            @Override
            public Endpoint controlEndpoint() {
                throw new UnsupportedOperationException();
            }

            @Override
            public String advertisedHost() {
                throw new UnsupportedOperationException();
            }

            @Override
            public String bindHost() {
                throw new UnsupportedOperationException();
            }

            @Override
            public io.rdma4j.spi.NanoClock clock() {
                throw new UnsupportedOperationException();
            }

            @Override
            public io.rdma4j.spi.Watchdog watchdog() {
                throw new UnsupportedOperationException();
            }
        };
    }
}
