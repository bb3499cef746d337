package io.rdma4j.transport.ibverbs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each package's {@code package-info.java} is the map of its package (issue #27): it names every
 * top-level class of the package, one line each on what it is for. The {@code ffi} package is left
 * out (its own map is kept by the native bindings' owner).
 */
class PackageMapTest {

    private static final Path SOURCES = Path.of("src/main/java/io/rdma4j/transport/ibverbs");

    @Test
    void everyPackageInfo_namesEveryTopLevelClassOfItsPackage() throws IOException {
        Map<String, List<String>> unnamed = new TreeMap<>();
        List<Path> packages;
        try (Stream<Path> dirs = Files.walk(SOURCES)) {
            packages = dirs.filter(Files::isDirectory).filter(d -> !d.getFileName().toString().equals("ffi")).toList();
        }
        for (Path dir : packages) {
            String map = Files.readString(dir.resolve("package-info.java"));
            List<String> missing;
            try (Stream<Path> files = Files.list(dir)) {
                missing = files.map(f -> f.getFileName().toString())
                        .filter(n -> n.endsWith(".java") && !n.equals("package-info.java"))
                        .map(n -> n.substring(0, n.length() - ".java".length()))
                        .filter(name -> !Pattern.compile("\\b" + name + "\\b").matcher(map).find())
                        .sorted().toList();
            }
            if (!missing.isEmpty()) {
                unnamed.put(("io/rdma4j/transport/ibverbs/" + SOURCES.relativize(dir)).replace('/', '.'), missing);
            }
        }

        assertTrue(packages.size() >= 5, "the scan must see the transport's packages, saw " + packages);
        assertEquals(Map.of(), unnamed, "classes that their package-info.java does not name, by package");
    }
}
