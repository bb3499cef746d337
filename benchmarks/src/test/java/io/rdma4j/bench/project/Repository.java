package io.rdma4j.bench.project;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.fail;

/** The project checks' way to the repository's root, wherever the build runs them from. */
final class Repository {

    private Repository() {
    }

    /**
     * The nearest folder at or above the working directory that holds the root {@code pom.xml},
     * {@code bom/}, {@code README.md} and {@code bin/lib/java.sh}.
     *
     * @throws org.opentest4j.AssertionFailedError if there is none
     */
    static Path root() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !(Files.exists(p.resolve("pom.xml")) && Files.exists(p.resolve("bom/pom.xml"))
                && Files.exists(p.resolve("README.md")) && Files.exists(p.resolve("bin/lib/java.sh")))) {
            p = p.getParent();
        }
        if (p == null) {
            fail("cannot find the repository root from " + Path.of("").toAbsolutePath());
        }
        return p;
    }
}
