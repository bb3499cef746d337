package io.rdma4j.bench.project;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The jars work as JPMS modules, not only on the class path: {@code io.rdma4j} resolves with its
 * dependencies, and its {@code uses} binds both transports' {@code provides}.
 */
class ModulePathTest {

    /** Directory names (reactor builds) and artifactIds (installed jars) of the library's jars. */
    private static final List<String> ARTIFACTS = List.of("spi", "unix", "api", "transport-tcp",
            "transport-ibverbs", "rdma4j-spi", "rdma4j-unix", "rdma4j-api", "rdma4j-transport-tcp", "rdma4j-transport-ibverbs",
            "disruptor", "caffeine");

    private static Path[] libraryEntries() {
        List<Path> paths = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String normalized = entry.replace('\\', '/');
            boolean test = normalized.contains("test-classes") || normalized.endsWith("-tests.jar");
            // a reactor module's ".../<dir>/target/classes", or an installed "<artifactId>-<version>.jar"
            if (!test && ARTIFACTS.stream().anyMatch(a -> normalized.endsWith("/" + a + "/target/classes")
                    || Path.of(entry).getFileName().toString().startsWith(a + "-"))) {
                paths.add(Path.of(entry));
            }
        }
        return paths.toArray(Path[]::new);
    }

    @Test
    void modulePath_apiResolves_andBindsBothTransportsThroughUsesAndProvides() {
        Configuration cf = ModuleLayer.boot().configuration()
                .resolveAndBind(ModuleFinder.of(libraryEntries()), ModuleFinder.of(), Set.of("io.rdma4j"));

        Set<String> names = cf.modules().stream().map(ResolvedModule::name).collect(Collectors.toCollection(TreeSet::new));

        assertTrue(names.containsAll(Set.of("io.rdma4j", "io.rdma4j.spi", "io.rdma4j.transport.tcp", "io.rdma4j.transport.ibverbs",
                "com.lmax.disruptor", "com.github.benmanes.caffeine")), names.toString());
    }

    @Test
    void moduleLayer_serviceLoader_findsBothProvidersByName() throws Exception {
        Configuration cf = ModuleLayer.boot().configuration()
                .resolveAndBind(ModuleFinder.of(libraryEntries()), ModuleFinder.of(), Set.of("io.rdma4j"));
        ModuleLayer layer = ModuleLayer.boot().defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
        Class<?> spi = layer.findLoader("io.rdma4j.spi").loadClass("io.rdma4j.spi.TransportProvider");

        Set<String> found = new TreeSet<>();
        for (Object provider : ServiceLoader.load(layer, spi)) {
            found.add((String) spi.getMethod("name").invoke(provider));
        }

        assertEquals(Set.of("ibverbs", "tcp"), found);
    }

    @Test
    void moduleDescriptors_exportOnlyApiAndSpiPackages() {
        Configuration cf = ModuleLayer.boot().configuration()
                .resolveAndBind(ModuleFinder.of(libraryEntries()), ModuleFinder.of(), Set.of("io.rdma4j"));

        Set<String> exported = new TreeSet<>();
        cf.modules().stream().filter(m -> m.name().startsWith("io.rdma4j"))
                .forEach(m -> m.reference().descriptor().exports().forEach(e -> exported.add(e.source())));

        assertTrue(exported.stream().noneMatch(p -> p.contains(".internal") || p.endsWith(".ffi")), exported.toString());
        assertTrue(exported.containsAll(Set.of("io.rdma4j", "io.rdma4j.spi")), exported.toString());
    }

    @Test
    void sharedNativeHelpers_areExportedToTheTransportsAlone() {
        Configuration cf = ModuleLayer.boot().configuration()
                .resolveAndBind(ModuleFinder.of(libraryEntries()), ModuleFinder.of(), Set.of("io.rdma4j"));

        ModuleDescriptor unix = cf.findModule("io.rdma4j.unix").orElseThrow().reference().descriptor();

        assertEquals(Set.of(Set.of("io.rdma4j.transport.shm", "io.rdma4j.transport.ibverbs")),
                unix.exports().stream().map(ModuleDescriptor.Exports::targets).collect(Collectors.toSet()));
    }
}
