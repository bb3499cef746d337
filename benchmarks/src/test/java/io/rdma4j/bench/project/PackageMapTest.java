package io.rdma4j.bench.project;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A newcomer finds a class from its package's map: every main package of every module has a
 * {@code package-info.java}, and it names each top-level class of the package.
 */
class PackageMapTest {


    /** Each main package directory of the repository (a directory under some src/main/java holding .java files). */
    private static List<Path> mainPackages() throws IOException {
        List<Path> packages = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Repository.root())) {
            files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> f.toString().replace('\\', '/').contains("/src/main/java/"))
                    .filter(f -> !f.toString().replace('\\', '/').contains("/target/"))
                    .filter(f -> !f.getFileName().toString().equals("module-info.java"))
                    .map(Path::getParent).distinct().forEach(packages::add);
        }
        return packages;
    }

    @Test
    void everyMainPackage_hasAPackageInfo_thatNamesEachOfItsClasses() throws IOException {
        List<Path> packages = mainPackages();
        assertFalse(packages.isEmpty(), "the scan must find the main packages");

        Map<String, List<String>> unmapped = new TreeMap<>();
        for (Path dir : packages) {
            String where = Repository.root().relativize(dir).toString();
            Path info = dir.resolve("package-info.java");
            if (!Files.exists(info)) {
                unmapped.put(where, List.of("(no package-info.java)"));
                continue;
            }
            String map = Files.readString(info);
            try (Stream<Path> classes = Files.list(dir)) {
                List<String> missing = classes.map(f -> f.getFileName().toString())
                        .filter(n -> n.endsWith(".java") && !n.equals("package-info.java"))
                        .map(n -> n.substring(0, n.length() - ".java".length()))
                        .filter(c -> !Pattern.compile("\\b" + c + "\\b").matcher(map).find())
                        .sorted().toList();
                if (!missing.isEmpty()) {
                    unmapped.put(where, missing);
                }
            }
        }
        assertEquals(Map.of(), unmapped, "classes their package-info.java does not name");
    }
}
